import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// What scripts/rdma-devices.sh promises (the guest's stage2 and the Docker entrypoint
// both run it): one soft device per dummy netdev, each with a documentation address.

function sysfs(path: string): string {
  return readFileSync(path, 'utf8').trim();
}

describe('device set-up (scripts/rdma-devices.sh)', () => {
  it('creates exactly rxe0 and siw0', () => {
    expect(readdirSync('/sys/class/infiniband').sort()).toEqual(['rxe0', 'siw0']);
  });

  it('binds rxe0 to dum0 and siw0 to dum1', () => {
    const links = JSON.parse(
      execFileSync('rdma', ['-j', 'link', 'show'], { encoding: 'utf8' }),
    ) as {
      ifname: string;
      netdev: string;
    }[];
    const byDevice = Object.fromEntries(links.map((l) => [l.ifname.split('/')[0], l.netdev]));
    expect(byDevice).toEqual({ rxe0: 'dum0', siw0: 'dum1' });
  });

  it('gives rxe0 the IPv4-mapped RoCEv2 GID of 192.0.2.1 at index 1', () => {
    expect(sysfs('/sys/class/infiniband/rxe0/ports/1/gids/1')).toBe(
      '0000:0000:0000:0000:0000:ffff:c000:0201',
    );
    expect(sysfs('/sys/class/infiniband/rxe0/ports/1/gid_attrs/types/1')).toBe('RoCE v2');
  });

  it('reports the node types of a RoCE and an iWARP device', () => {
    // node_type: "1: CA" for rxe, "4: RNIC" for siw.
    expect(sysfs('/sys/class/infiniband/rxe0/node_type')).toBe('1: CA');
    expect(sysfs('/sys/class/infiniband/siw0/node_type')).toBe('4: RNIC');
  });

  it('puts the documentation-range addresses on the dummy netdevs', () => {
    const show = (dev: string) =>
      execFileSync('ip', ['-4', '-o', 'addr', 'show', 'dev', dev], { encoding: 'utf8' });
    expect(show('dum0')).toContain('192.0.2.1/24');
    expect(show('dum1')).toContain('198.51.100.1/24');
  });
});
