/** The journal layer (suites/fixtures/pipeline/journal.ts): what a request may change is journaled before it leaves. */
import { test, expect } from '../../test.ts';
import { journalBefore, petOfRequest } from '../../../suites/fixtures/pipeline/journal.ts';
import type { RunJournal } from '../../../suites/journal/writer.ts';

/** A journal that keeps its calls in order. */
function recordingJournal(open: Record<string, string> = {}) {
  const calls: string[] = [];
  let n = 0;
  const journal: RunJournal = {
    file: '/dev/null',
    change: (pet, original, by) => (calls.push(`change ${pet} ${original} ${by}`), `e${++n}`),
    writing: (pet, count, by) => void calls.push(`writing ${pet} ${count} ${by}`),
    openFor: (pet) => open[pet],
    writtenOn: () => undefined,
    message: (by) => (calls.push(`message ${by}`), `m${++n}`),
    done: (entries, how, by) => void calls.push(`done ${entries.join(',')} ${how} ${by}`),
  };
  return { journal, calls };
}

test('the pet of a change is the path segment as sent; a safe request or another path names none', () => {
  expect(petOfRequest('inventory', 'PATCH', '/inventory/12?x=1')).toBe('12');
  expect(petOfRequest('inventory', 'PATCH', '/inventory/abc%20')).toBe('abc%20');
  expect(petOfRequest('inventory', 'GET', '/inventory/12')).toBeUndefined();
  expect(petOfRequest('messages', 'POST', '/inventory/12')).toBeUndefined();
  expect(petOfRequest('inventory', 'PATCH', '/inventory')).toBeUndefined();
});

test('a change on a pet not journaled opens an entry with no original, and journals the count it writes, before it leaves', () => {
  const { journal, calls } = recordingJournal();
  const after = journalBefore(
    journal,
    { method: 'PATCH', base: 'inventory', path: '/inventory/7', json: { quantity: 3 } },
    'PATCH',
    'INV-02',
  );
  expect(calls).toEqual(['change 7 null INV-02', 'writing 7 3 INV-02']);
  after(404);
  expect(calls.at(-1)).toBe('done e1 absent INV-02');
  // An invalid id (400) changed nothing either; a 2xx or a refusal of another kind leaves the list at the run's end to decide.
  for (const [status, closed] of [
    [400, true],
    [200, false],
    [401, false],
    [undefined, false],
  ] as const) {
    const again = recordingJournal();
    journalBefore(again.journal, { method: 'PATCH', base: 'inventory', path: '/inventory/8' }, 'PATCH', 'INV-03')(status);
    expect(again.calls.includes('done e1 absent INV-03')).toBe(closed);
  }
});

test('a pet already journaled opens nothing more; a 200 closes nothing', () => {
  const { journal, calls } = recordingJournal({ '7': 'open-1' });
  const after = journalBefore(
    journal,
    { method: 'PATCH', base: 'inventory', path: '/inventory/7', json: { quantity: 3 } },
    'PATCH',
    'INV-02',
  );
  after(200);
  expect(calls).toEqual(['writing 7 3 INV-02']);
});

test('a message is journaled before it leaves; a refusal closes it, a 2xx or no answer leaves it open', () => {
  for (const [status, closed] of [
    [400, true],
    [202, false],
    [undefined, false],
  ] as const) {
    const { journal, calls } = recordingJournal();
    journalBefore(journal, { method: 'POST', base: 'messages', path: '/messages', json: { message: 'm' } }, 'POST', 'MSG-01')(status);
    expect(calls[0]).toBe('message MSG-01');
    expect(calls.includes('done m1 refused MSG-01')).toBe(closed);
  }
});

test('a safe request, or a client without a journal, journals nothing', () => {
  const { journal, calls } = recordingJournal();
  journalBefore(journal, { method: 'GET', base: 'inventory', path: '/inventory/7' }, 'GET', 'INV-01')(200);
  expect(calls).toEqual([]);
  expect(() => journalBefore(undefined, { method: 'PATCH', base: 'inventory', path: '/inventory/7' }, 'PATCH', 'x')(404)).not.toThrow();
});
