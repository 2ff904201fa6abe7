/**
 * A separate process of the journal tests: appends `count` change records to `file` as fast as it
 * can (argv: <file> <process number> <count>), so that several of them race on one file.
 */
import { appendRecord, newEntryId } from '../../core/journal.ts';

const [file, proc, count] = process.argv.slice(2);
const padding = 'x'.repeat(400);
for (let i = 0; i < Number(count); i++) {
  appendRecord(file!, {
    v: 1,
    kind: 'change',
    entry: newEntryId(),
    at: new Date().toISOString(),
    by: `process ${proc}`,
    target: `http://127.0.0.1:1/v1/${padding}`,
    petId: String(i),
    original: String(i),
  });
}
