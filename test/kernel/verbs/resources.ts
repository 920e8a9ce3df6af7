/**
 * What `rdma res` says this process holds: the leak check run after each kernel test
 * file (every PD, CQ, QP, MR and cm_id must have been released).
 */
import { execFileSync } from 'node:child_process';

/** The kinds `rdma res show <kind>` reports per process. */
export const RESOURCE_KINDS = ['pd', 'cq', 'qp', 'mr', 'cm_id'] as const;

/** Per kind, how many objects of this process the kernel knows about. */
export function ownResources(pid = process.pid): Record<(typeof RESOURCE_KINDS)[number], number> {
  const out = { pd: 0, cq: 0, qp: 0, mr: 0, cm_id: 0 };
  for (const kind of RESOURCE_KINDS) {
    const json = execFileSync('rdma', ['-j', 'res', 'show', kind], { encoding: 'utf8' }).trim();
    const entries = (json === '' ? [] : JSON.parse(json)) as { pid?: number }[];
    out[kind] = entries.filter((e) => e.pid === pid).length;
  }
  return out;
}

/** Zero of everything. */
export const NONE = { pd: 0, cq: 0, qp: 0, mr: 0, cm_id: 0 } as const;
