/**
 * The plugin's field names: those it shares with Wireshark are real tshark 4.0 fields
 * (the list `tshark -G fields` prints), the others are `rdma_interop.*` and each is
 * documented in docs/wireshark.md; names are unique, and the Lua registers every one.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateWiresharkPlugin, wiresharkPluginFields } from '../../../src/wireshark/generate.js';
import { TSHARK_40_IWARP_FIELDS } from '../codec/iwarp/tshark-4.0-iwarp-fields.js';

const fields = wiresharkPluginFields();
const docs = readFileSync('docs/wireshark.md', 'utf8');

describe('the Wireshark plugin fields', () => {
  it('reuse only names tshark 4.0 has, and name the others rdma_interop.*', () => {
    for (const f of fields)
      if (f.wireshark) expect(TSHARK_40_IWARP_FIELDS, f.abbrev).toContain(f.abbrev);
      else expect(f.abbrev).toMatch(/^rdma_interop\.[a-z0-9_.]+$/);
  });

  it('are each documented in docs/wireshark.md', () => {
    const missing = fields.filter((f) => !docs.includes(`\`${f.abbrev}\``)).map((f) => f.abbrev);
    expect(missing).toEqual([]);
  });

  it('are unique and each registered once in the generated Lua', () => {
    const lua = generateWiresharkPlugin();
    expect(new Set(fields.map((f) => f.abbrev)).size).toBe(fields.length);
    for (const f of fields)
      expect(lua.split(`F["${f.abbrev}"] = ProtoField.`).length - 1, f.abbrev).toBe(1);
  });
});
