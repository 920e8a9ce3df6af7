/**
 * Time to detection in probe --benchmark (issue 32): results carry no time of their own, so
 * the host stamps the guest's progress lines as they arrive: from the line that says the
 * variant module is loaded (probe-guest.ts), to each `probe: <id> (<pass>): <verdict>`
 * line. Seconds of the TCG guest, as a user of the tool waits for them.
 */

const LOADED = /probe: benchmark variant \S+ loaded/;
const RESULT = /probe: (\S+) \([^)]*\): \S+$/;

/** Seconds after the variant loaded (or the run began), per result id; `end` the last line. */
export interface Timeline {
  readonly results: Readonly<Record<string, number>>;
  readonly end: number;
}

/** Collects a timeline from progress lines fed with the time they arrived (seconds). */
export class TimelineRecorder {
  private origin: number;
  private last: number;
  private readonly at: Record<string, number> = {};
  private partial = '';

  constructor(startSeconds: number) {
    this.origin = startSeconds;
    this.last = startSeconds;
  }

  /** Output of the guest as it comes (lines may be cut across chunks). */
  chunk(text: string, seconds: number): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    for (const l of lines) this.line(l, seconds);
  }

  /** One progress line, arrived at `seconds`. */
  line(text: string, seconds: number): void {
    this.last = seconds;
    if (LOADED.test(text)) {
      this.origin = seconds;
      return;
    }
    const id = RESULT.exec(text)?.[1];
    // The first time an id answers (a resumed guest does not run it again).
    if (id !== undefined && this.at[id] === undefined) this.at[id] = seconds - this.origin;
  }

  /** The run ended (the guest exited, died or was stopped) at `seconds`. */
  finish(seconds: number): void {
    this.last = seconds;
  }

  timeline(): Timeline {
    const round = (s: number) => Math.round(s * 10) / 10;
    return {
      results: Object.fromEntries(Object.entries(this.at).map(([id, s]) => [id, round(s)])),
      end: round(this.last - this.origin),
    };
  }
}
