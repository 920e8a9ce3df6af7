/**
 * An exhaustive switch over RDMAP families: one handler per family, each given its family's
 * message type, so a family without a handler does not compile and a new opcode of an
 * existing family needs none.
 */
import type { RdmapMessage, RdmapMessageOfFamily } from './messages.js';
import { type RdmapFamily, rdmapOpcodeOf } from './opcodes.js';

/** A handler for every family; `A` are the arguments passed on after the message. */
export type FamilyHandlers<R, A extends readonly unknown[] = []> = {
  readonly [F in RdmapFamily]: (message: RdmapMessageOfFamily<F>, ...args: A) => R;
};

/** The family of a message (its opcode row's). */
export function familyOf(message: RdmapMessage): RdmapFamily {
  return rdmapOpcodeOf(message.kind).family;
}

/**
 * The handler of `family`, taking any message: the caller passes a message of that family
 * (its opcode row's), as `byFamily` does. For hot paths that already hold the row.
 */
export function handlerOf<R, A extends readonly unknown[]>(
  handlers: FamilyHandlers<R, A>,
  family: RdmapFamily,
): (message: RdmapMessage, ...args: A) => R {
  // The row's family names the message type its kind belongs to (messages.ts `KindOf`),
  // so the handler fits the message; the compiler cannot follow a family chosen at run time.
  return handlers[family] as (message: RdmapMessage, ...args: A) => R;
}

/** Calls the handler of `message`'s family with it and `args`. */
export function byFamily<R, A extends readonly unknown[]>(
  message: RdmapMessage,
  handlers: FamilyHandlers<R, A>,
  ...args: A
): R {
  return handlerOf(handlers, familyOf(message))(message, ...args);
}
