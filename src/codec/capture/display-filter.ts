/**
 * The display-filter subset of `decode --filter`, after tshark's (`-Y`): comparisons
 * `==`, `!=`, `<`, `>`, `<=`, `>=` (and tshark's `eq`, `ne`, `lt`, `gt`, `le`, `ge`),
 * `and`/`&&`, `or`/`||`, `not`/`!`, parentheses, and a bare field name for presence, e.g.
 * `infiniband.bth.opcode == 20 && !(crc == valid)`. The older `key=value|value,key=value`
 * form (every condition must hold) is the same language's other entry.
 *
 * The grammar is peggy's (a PEG parser generator, the maintained successor of PEG.js:
 * typed, no run-time dependencies, errors with line and column). The parser is generated
 * once, on the first filter. As in tshark, `a == x` holds when any occurrence of `a` in the
 * frame equals x, and `a != x` when none does.
 */
import peggy from 'peggy';
import { RdmaInteropError } from '../../errors.js';

/** A filter literal: a number when it reads as one (decimal or 0x hex), else text. */
export interface FilterLiteral {
  readonly text: string;
  readonly number: bigint | undefined;
  readonly quoted: boolean;
}

/** The comparison operators. */
export type FilterOperator = '==' | '!=' | '<' | '>' | '<=' | '>=';

/** A parsed filter. `at` is the 1-based column of a field name. */
export type FilterNode =
  | { readonly kind: 'and' | 'or'; readonly left: FilterNode; readonly right: FilterNode }
  | { readonly kind: 'not'; readonly expr: FilterNode }
  | { readonly kind: 'present'; readonly field: string; readonly at: number }
  | {
      readonly kind: 'compare';
      readonly field: string;
      readonly at: number;
      readonly op: FilterOperator;
      readonly value: FilterLiteral;
      /** 1-based column of the value. */
      readonly valueAt: number;
    };

/** A filter that does not parse or names an unknown field: one line, with the position. */
export class DisplayFilterError extends RdmaInteropError {
  override readonly name = 'DisplayFilterError';
  readonly origin = 'codec';
  constructor(
    /** 1-based column in the filter text. */
    readonly column: number,
    detail: string,
  ) {
    super(`bad filter at position ${column}: ${detail}`);
  }
}

const GRAMMAR = String.raw`
{{
  const WORD_OPS = { eq: '==', ne: '!=', lt: '<', gt: '>', le: '<=', ge: '>=' };
  function literal(text, quoted) {
    const t = text.toLowerCase();
    const number = !quoted && /^(0x[0-9a-f]+|[0-9]+)$/.test(t) ? BigInt(t) : undefined;
    return { text, number, quoted };
  }
  function chain(head, tail, kind) {
    return tail.reduce((left, item) => ({ kind, left, right: item[3] }), head);
  }
}}

Start = _ e:(Legacy / Or) _ { return e; }

// key=value|value,key=value: every condition holds, a condition when any value matches.
Legacy = head:LegacyCondition tail:(_ "," _ LegacyCondition)* !(_ [^ \t]) {
  return chain(head, tail, 'and');
}
LegacyCondition = f:FieldName _ "=" !"=" _ head:LegacyValue tail:(_ "|" _ LegacyValue)* {
  const values = [head, ...tail.map((t) => t[3])];
  return values
    .map((v) => ({ kind: 'compare', field: f.name, at: f.at, op: '==', value: v.value, valueAt: v.at }))
    .reduce((left, right) => ({ kind: 'or', left, right }));
}
LegacyValue = v:Bare { return { value: literal(v, false), at: location().start.column }; }

Or = head:And tail:(_ OrOp _ And)* { return chain(head, tail, 'or'); }
OrOp = "||" / "or"i !WordChar
And = head:Not tail:(_ AndOp _ Not)* { return chain(head, tail, 'and'); }
AndOp = "&&" / "and"i !WordChar
Not = ("!" !"=" / "not"i !WordChar) _ e:Not { return { kind: 'not', expr: e }; }
    / Primary
Primary = "(" _ e:Or _ ")" { return e; }
        / Comparison
Comparison = f:FieldName _ op:Operator _ v:Value {
               return { kind: 'compare', field: f.name, at: f.at, op, value: v.value, valueAt: v.at };
             }
           / f:FieldName { return { kind: 'present', field: f.name, at: f.at }; }
Operator = "==" / "!=" / "<=" / ">=" / "<" / ">"
         / w:("eq"i / "ne"i / "lt"i / "gt"i / "le"i / "ge"i) !WordChar { return WORD_OPS[w.toLowerCase()]; }
FieldName "field name" = [A-Za-z_] [A-Za-z0-9_.]* { return { name: text(), at: location().start.column }; }
Value "value" = '"' chars:$[^"]* '"' { return { value: literal(chars, true), at: location().start.column }; }
              / v:Bare { return { value: literal(v, false), at: location().start.column }; }
Bare = $[A-Za-z0-9_.:\-]+
WordChar = [A-Za-z0-9_.]
_ "space" = [ \t]*
`;

let parser: peggy.Parser | undefined;

/** Parses a filter; throws DisplayFilterError (with the column) when it does not parse. */
export function parseDisplayFilter(text: string): FilterNode {
  parser ??= peggy.generate(GRAMMAR);
  try {
    return parser.parse(text) as FilterNode;
  } catch (e) {
    if (e instanceof parser.SyntaxError) {
      const message = e.message.replace(/\.$/, '');
      throw new DisplayFilterError(e.location.start.column, message);
    }
    throw e;
  }
}

/** A field a filter names: where, and the literal it is compared with (if any). */
export interface FilterUse {
  readonly field: string;
  readonly at: number;
  readonly value?: FilterLiteral;
  readonly valueAt?: number;
}

/** Every field a filter names, with its column and literal. */
export function filterFields(node: FilterNode): FilterUse[] {
  switch (node.kind) {
    case 'and':
    case 'or':
      return [...filterFields(node.left), ...filterFields(node.right)];
    case 'not':
      return filterFields(node.expr);
    case 'present':
      return [{ field: node.field, at: node.at }];
    case 'compare':
      return [{ field: node.field, at: node.at, value: node.value, valueAt: node.valueAt }];
  }
}

/** A value a filter compares: raw numbers, flags, text, bytes, or an opcode (name and number). */
export type FilterValue =
  | number
  | bigint
  | boolean
  | string
  | Uint8Array
  | { readonly name: string; readonly value: number };

function hex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

function order(op: FilterOperator, c: number): boolean {
  switch (op) {
    case '==':
      return c === 0;
    case '!=':
      return c !== 0;
    case '<':
      return c < 0;
    case '>':
      return c > 0;
    case '<=':
      return c <= 0;
    case '>=':
      return c >= 0;
  }
}

/** Compares one value with a literal: undefined when they cannot be compared. */
function compareOne(v: FilterValue, lit: FilterLiteral): number | undefined {
  if (typeof v === 'object' && !(v instanceof Uint8Array)) {
    if (lit.number !== undefined) return Math.sign(Number(BigInt(v.value) - lit.number));
    return v.name.toLowerCase() === lit.text.toLowerCase() ? 0 : undefined;
  }
  if (v instanceof Uint8Array) {
    const want = lit.text.toLowerCase().replaceAll(':', '').replace(/^0x/, '');
    return hex(v) === want ? 0 : undefined;
  }
  if (typeof v === 'string') {
    // The project's columns are text: numbers among them compare as numbers.
    if (lit.number !== undefined && /^(0x[0-9a-f]+|[0-9]+)$/i.test(v)) {
      const n = BigInt(v);
      return n === lit.number ? 0 : n < lit.number ? -1 : 1;
    }
    return v === lit.text ? 0 : v < lit.text ? -1 : 1;
  }
  if (lit.number === undefined) {
    if (typeof v === 'boolean') {
      const t = lit.text.toLowerCase();
      if (t === 'true' || t === 'false') return v === (t === 'true') ? 0 : v ? 1 : -1;
    }
    return undefined;
  }
  const n = typeof v === 'boolean' ? (v ? 1n : 0n) : BigInt(v);
  return n === lit.number ? 0 : n < lit.number ? -1 : 1;
}

/** Evaluates a filter over a frame's (or an item's) values: `values(field)` lists them. */
export function evaluateFilter(
  node: FilterNode,
  values: (field: string) => readonly FilterValue[],
): boolean {
  switch (node.kind) {
    case 'and':
      return evaluateFilter(node.left, values) && evaluateFilter(node.right, values);
    case 'or':
      return evaluateFilter(node.left, values) || evaluateFilter(node.right, values);
    case 'not':
      return !evaluateFilter(node.expr, values);
    case 'present':
      return values(node.field).length > 0;
    case 'compare': {
      const all = values(node.field);
      if (node.op === '!=') return !all.some((v) => compareOne(v, node.value) === 0);
      return all.some((v) => {
        const c = compareOne(v, node.value);
        return c !== undefined && order(node.op, c);
      });
    }
  }
}
