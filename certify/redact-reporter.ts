import fs from 'node:fs';
import path from 'node:path';
import type { FullConfig, Reporter, Suite, TestCase, TestError, TestResult, TestStep } from '@playwright/test/reporter';
import { redactText, secretNeedles, secretsFromEnv, type SecretNeedle } from '../core/secrets.ts';

/**
 * First reporter of certify's run: scrubs keys out of what the other reporters (console, phases, html, junit, json)
 * are about to write, in place; a key already in an attachment file fails the run (docs/run-costs.md, keys).
 */
export default class RedactReporter implements Reporter {
  private readonly needles: SecretNeedle[] = secretNeedles(secretsFromEnv(process.env));
  private readonly ledgerFile = process.env.CERTIFY_REDACTIONS_FILE;
  private rootDir = process.cwd();
  /** In-memory scrubs (never reached a file); reported as a count. */
  private inMemory = 0;

  onBegin(config: FullConfig, _suite: Suite): void {
    this.rootDir = config.rootDir;
  }

  private text(value: string | undefined): string | undefined {
    if (value === undefined || this.needles.length === 0) return value;
    const { text, count } = redactText(value, this.needles);
    this.inMemory += count;
    return text;
  }

  private error(error: TestError | undefined): void {
    if (!error) return;
    error.message = this.text(error.message);
    error.stack = this.text(error.stack);
    error.value = this.text(error.value);
    error.snippet = this.text(error.snippet);
    if (error.cause) this.error(error.cause);
  }

  private record(entry: Record<string, unknown>): void {
    if (!this.ledgerFile) return;
    fs.mkdirSync(path.dirname(this.ledgerFile), { recursive: true });
    fs.appendFileSync(this.ledgerFile, `${JSON.stringify(entry)}\n`);
  }

  private attachments(test: TestCase, list: TestResult['attachments']): void {
    for (const a of list) {
      if (a.body) {
        const before = a.body.toString('utf8');
        const after = this.text(before)!;
        if (after !== before) a.body = Buffer.from(after, 'utf8');
      }
      if (a.path && fs.existsSync(a.path)) {
        let content: string;
        try {
          content = fs.readFileSync(a.path, 'utf8');
        } catch {
          continue;
        }
        const { text, count } = redactText(content, this.needles);
        if (count > 0) {
          fs.writeFileSync(a.path, text);
          this.record({
            kind: 'attachment-file',
            file: path.relative(this.rootDir, a.path),
            attachment: a.name,
            test: this.text(test.title),
            count,
          });
        }
      }
    }
  }

  onStepEnd(_test: TestCase, _result: TestResult, step: TestStep): void {
    if (this.needles.length === 0) return;
    this.error(step.error);
    (step as { title: string }).title = this.text(step.title)!;
  }

  onTestEnd(test: TestCase, result: TestResult): void {
    if (this.needles.length === 0) return;
    for (const e of result.errors) this.error(e);
    this.error(result.error);
    for (const a of [...test.annotations, ...result.annotations]) a.description = this.text(a.description);
    this.attachments(test, result.attachments);
  }

  onError(error: TestError): void {
    this.error(error);
  }

  async onEnd(): Promise<void> {
    if (this.inMemory > 0) this.record({ kind: 'in-memory', count: this.inMemory });
  }

  printsToStdio(): boolean {
    return false;
  }
}
