import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type ChildKind,
  Children,
  CLOSE_ORDER,
  type NativeResource,
  Resource,
} from '../../../src/verbs/lifetime.js';

// The close order and the cascade of the TypeScript resource base, with scripted native
// objects (the kernel tests run them on rxe and siw: test/kernel/verbs/misuse.test.ts).

/** A native object that records its close calls in `log`. */
function scripted(name: string, log: string[], refuse = false): NativeResource {
  let closed = false;
  return {
    get closed() {
      return closed;
    },
    close(cascade?: boolean) {
      log.push(`${name}:${String(cascade)}`);
      if (refuse) throw new Error(`${name} refused`);
      closed = true;
    },
  };
}

class Item extends Resource {
  readonly hooks: string[];
  constructor(native: NativeResource, hooks: string[], kind?: ChildKind, parents: Item[] = []) {
    super(native, kind, parents);
    this.hooks = hooks;
  }
  protected override onClosing(): void {
    this.hooks.push('closing');
  }
  protected override onClose(): void {
    this.hooks.push('closed');
  }
}

describe('Children', () => {
  it('closes by kind (QP, AH, MR, PD, CQ, cm_id), then in creation order', () => {
    const log: string[] = [];
    const children = new Children<{ closed: boolean; close(): void }>();
    const made: { closed: boolean; close(): void }[] = [];
    const add = (name: string, kind: ChildKind) => {
      const child = {
        closed: false,
        close() {
          log.push(name);
          this.closed = true;
        },
      };
      made.push(child); // kept reachable: the list holds its children weakly
      children.add(child, kind);
    };
    add('cq1', 'Cq');
    add('pd1', 'Pd');
    add('mr1', 'Mr');
    add('qp1', 'Qp');
    add('ah1', 'Ah');
    add('qp2', 'Qp');
    add('id1', 'CmId');
    add('pd2', 'Pd');
    children.closeAll();
    expect(log).toEqual(['qp1', 'qp2', 'ah1', 'mr1', 'pd1', 'pd2', 'cq1', 'id1']);
    expect(made.every((c) => c.closed)).toBe(true);
  });
});

describe('Resource', () => {
  it('close() closes the live children first, then runs onClosing, the native close and onClose', () => {
    const log: string[] = [];
    const hooks: string[] = [];
    const parent = new Item(scripted('ctx', log), hooks);
    const cq = new Item(scripted('cq', log), [], 'Cq', [parent]);
    const pd = new Item(scripted('pd', log), [], 'Pd', [parent]);
    const qp = new Item(scripted('qp', log), [], 'Qp', [pd, cq]);
    parent.close();
    expect(log).toEqual(['qp:true', 'pd:true', 'cq:true', 'ctx:true']);
    expect(hooks).toEqual(['closing', 'closed']);
    expect([qp.closed, pd.closed, cq.closed, parent.closed]).toEqual([true, true, true, true]);
    parent.close(); // idempotent: nothing more reaches the native object
    expect(log).toHaveLength(4);
  });

  it('close({ cascade: false }) leaves the children to the native refusal; onClose runs only once closed', () => {
    const log: string[] = [];
    const hooks: string[] = [];
    const parent = new Item(scripted('pd', log, true), hooks);
    const child = new Item(scripted('mr', log), [], 'Mr', [parent]);
    expect(() => parent.close({ cascade: false })).toThrow('pd refused');
    expect(log).toEqual(['pd:false']);
    expect(hooks).toEqual(['closing']);
    expect([child.closed, parent.closed]).toEqual([false, false]);
  });

  it('[Symbol.dispose] closes with cascade', () => {
    const log: string[] = [];
    const parent = new Item(scripted('channel', log), []);
    const id = new Item(scripted('id', log), [], 'CmId', [parent]);
    parent[Symbol.dispose]();
    expect(id.closed).toBe(true);
    expect(log).toEqual(['id:true', 'channel:true']);
  });
});

describe('one close order in both languages', () => {
  it("the TypeScript CLOSE_ORDER is the addon's Rank (native/common.h), kind by kind", () => {
    const header = readFileSync('native/common.h', 'utf8');
    const ranks = /enum class Rank \{([^}]*)\}/.exec(header)?.[1];
    expect(ranks, 'enum class Rank in native/common.h').toBeDefined();
    const native = (ranks ?? '').split(',').map((r) => r.trim().replace(/^k/, ''));
    expect([...CLOSE_ORDER]).toEqual(native);
  });

  it('windows close before QPs (a type 2 window holds its QP), QPs before SRQs and MRs', () => {
    const at = (kind: (typeof CLOSE_ORDER)[number]) => CLOSE_ORDER.indexOf(kind);
    expect([at('Mw') < at('Qp'), at('Qp') < at('Srq'), at('Mw') < at('Mr')]).toEqual([
      true,
      true,
      true,
    ]);
  });
});
