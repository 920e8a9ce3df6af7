/**
 * How a guided finding is reduced (issue 32): the minimizer (probe/minimize.ts) drops steps of
 * a sequence, then each step's changes through `guidedStepReductions`: an edit dropped or
 * narrowed by a byte at either end, the cut and the extension removed (or the extension
 * halved), and the ICRC made right again. Every
 * candidate changes fewer bytes of the base request than the step it comes from, so the
 * reduction ends.
 */
import type { GuidedStep } from './guided-input.js';

/** Smaller versions of `step`, the most reduced first. */
export function guidedStepReductions(step: GuidedStep): GuidedStep[] {
  const out: GuidedStep[] = [];
  const without = <K extends 'cut' | 'extra'>(k: K): GuidedStep => {
    const { [k]: _, ...rest } = step;
    return rest as GuidedStep;
  };
  if (step.edits.length > 0) out.push({ ...step, edits: [] });
  step.edits.forEach((_, i) => {
    if (step.edits.length > 1) out.push({ ...step, edits: step.edits.filter((_, j) => j !== i) });
  });
  if (step.cut !== undefined) out.push(without('cut'));
  if (step.extra !== undefined) {
    out.push(without('extra'));
    if (step.extra.length > 1)
      out.push({ ...step, extra: step.extra.slice(0, Math.floor(step.extra.length / 2)) });
  }
  if (step.icrcXor !== 0) out.push({ ...step, icrcXor: 0 });
  step.edits.forEach((e, i) => {
    if (e.bytes.length < 2) return;
    const narrowed = (edit: GuidedStep['edits'][number]): GuidedStep => ({
      ...step,
      edits: step.edits.map((x, j) => (j === i ? edit : x)),
    });
    out.push(narrowed({ at: e.at + 1, bytes: e.bytes.slice(1) }));
    out.push(narrowed({ at: e.at, bytes: e.bytes.slice(0, -1) }));
  });
  return out;
}
