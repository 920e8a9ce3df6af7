/** A value JSON can hold as it is (what results.json stores for expected and observed). */
export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };
