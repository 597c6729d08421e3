import { ChildProcess, spawn } from 'node:child_process';
import type { compiledFixture } from './processes';
import { waitFor } from './wait';

export type Fixture = Awaited<ReturnType<typeof compiledFixture>>;

/** The fixture app as a real process: its JSON event lines and its whole output. */
export class AppProcess {
  readonly events: Record<string, unknown>[] = [];
  output = '';
  exited: Promise<{ code: number | null; signal: string | null; at: number }>;
  private readonly child: ChildProcess;

  constructor(fixture: Fixture, env: Record<string, string>) {
    this.child = spawn(process.execPath, fixture.args, {
      env: { ...process.env, ...fixture.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    this.child.stdout!.on('data', (chunk: Buffer) => {
      this.output += chunk.toString();
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) if (line.startsWith('{')) this.events.push(JSON.parse(line));
    });
    this.child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal, at: Date.now() })),
    );
  }

  event(key: string): Record<string, unknown> | undefined {
    return this.events.find((event) => key in event);
  }

  async waitEvent(key: string, what: string, ms = 120_000): Promise<Record<string, unknown>> {
    await waitFor(() => !!this.event(key) || this.child.exitCode !== null, what, ms);
    const event = this.event(key);
    if (!event) throw new Error(`${what}: the app exited first\n${this.output}`);
    return event;
  }

  /** SIGTERM; resolves with how long the process took to exit. */
  async terminate(): Promise<number> {
    const sent = Date.now();
    this.child.kill('SIGTERM');
    const { at } = await this.exited;
    return at - sent;
  }

  /** Sends `signal` (the fixture decides what it means). */
  signal(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  /** Lines of the module saying a connection was lost, per connection name. */
  outageLines(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const match of this.output.matchAll(
      /Redis connection "([^"]+)" (?:lost|not connected yet)/g,
    )) {
      counts.set(match[1], (counts.get(match[1]) ?? 0) + 1);
    }
    return counts;
  }
}
