import { describe, expect, it } from 'vitest';
import { appliesIn, type BehaviourRecord } from '../../../src/judge/record.js';
import {
  compareToBound,
  inRange,
  rangeText,
  versionNumbers,
} from '../../../src/judge/version-range.js';

describe('version ranges of recorded behaviour', () => {
  it("reads Debian's kernel and rdma-core version strings as numbers", () => {
    expect(versionNumbers('6.1.0-56-amd64')).toEqual([6, 1, 0]);
    expect(versionNumbers('6.12.95+deb12-amd64')).toEqual([6, 12, 95]);
    expect(versionNumbers('7.3.4+deb13-amd64')).toEqual([7, 3, 4]);
    expect(versionNumbers('44.0-2')).toEqual([44, 0]);
    expect(versionNumbers('unknown')).toEqual([]);
  });

  it('compares numerically on the precision of the bound', () => {
    expect(compareToBound('6.12.95+deb12-amd64', '6.2')).toBe(1);
    expect(compareToBound('6.1.0-56-amd64', '6.1')).toBe(0);
    expect(compareToBound('6.1.0-56-amd64', '6.2')).toBe(-1);
    expect(compareToBound('56.1-1', '45')).toBe(1);
  });

  it('holds from `from` up to, not including, `before`', () => {
    const line61 = { from: '6.1', before: '6.2' };
    expect(inRange('6.1.0-56-amd64', line61)).toBe(true);
    expect(inRange('6.12.95+deb12-amd64', line61)).toBe(false);
    expect(inRange('6.0.9', line61)).toBe(false);
    const since62 = { from: '6.2' };
    expect(inRange('7.3.4+deb13-amd64', since62)).toBe(true);
    expect(inRange('6.1.0-56-amd64', since62)).toBe(false);
    expect(inRange('unknown', since62)).toBe(false);
    expect(rangeText(line61)).toBe('6.1 <= v < 6.2');
    expect(rangeText(since62)).toBe('>= 6.2');
  });

  it('a record applies only inside both its kernel and rdma-core ranges', () => {
    const k: BehaviourRecord = {
      id: 'test',
      class: 'allowed',
      rule: 'ibv_post_send(3)',
      provider: 'rxe',
      kernel: { from: '6.2' },
      rdmaCore: { from: '45' },
      scope: ['rxe-*'],
      observed: { post1: 'EINVAL' },
      why: 'test',
    };
    const on = (kernel: string, rdmaCore: string) =>
      appliesIn(k, { provider: 'rxe', kernel, rdmaCore });
    expect(on('6.12.95+deb12-amd64', '56.1')).toBe(true);
    expect(on('6.12.95+deb12-amd64', '44.0-2')).toBe(false);
    expect(on('6.1.0-56-amd64', '56.1')).toBe(false);
    expect(appliesIn(k, { provider: 'siw', kernel: '7.3.4', rdmaCore: '56.1' })).toBe(false);
  });
});
