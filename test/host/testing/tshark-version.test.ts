import { describe, expect, it } from 'vitest';
import {
  assertTestedTshark,
  parseTsharkVersion,
  TESTED_TSHARK,
  TSHARK_AVAILABLE,
  TSHARK_VERSION,
} from '../../helpers/tshark.js';

// Issue 38: the tshark comparisons rely on tshark 4.0's output formats; every run through
// test/helpers/tshark.ts and wireshark-plugin.ts checks the installed release first.
describe('the tshark the comparisons rely on', () => {
  it('reads the version of a tshark --version line and refuses another release', () => {
    expect(
      parseTsharkVersion('TShark (Wireshark) 4.0.17 (Git v4.0.17 packaged as 4.0.17-0+deb12u3).'),
    ).toBe('4.0.17');
    expect(parseTsharkVersion('Wireshark 4.2.2')).toBeUndefined();
    expect(() => assertTestedTshark('4.0.17')).not.toThrow();
    expect(() => assertTestedTshark('4.2.2')).toThrow(
      /tshark 4\.2\.2 .*tshark 4\.0\.x output formats/,
    );
    expect(() => assertTestedTshark('40.0.1')).toThrow();
    expect(() => assertTestedTshark('')).toThrow(/tshark 4\.0\.x output formats/);
  });

  it.skipIf(!TSHARK_AVAILABLE)(`is installed as ${TESTED_TSHARK}.x`, () => {
    expect(TSHARK_VERSION).toMatch(/^4\.0\.\d+$/);
  });
});
