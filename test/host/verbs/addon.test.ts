import { execFileSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Context } from '../../../src/verbs/device.js';
import {
  isVerbsError,
  listDevices,
  VerbsArgumentError,
  VerbsError,
} from '../../../src/verbs/index.js';
import { addon } from '../../../src/verbs/native.js';
import { itUnless } from '../../helpers/not-run.js';

// A host with RDMA devices: /sys/class/infiniband holds one entry per device (the class
// directory itself exists, empty, once ib_core is loaded). scripts/test.sh and the closing
// line's condition host-has-rdma-devices use the same test.
const hostHasRdma =
  existsSync('/sys/class/infiniband') && readdirSync('/sys/class/infiniband').length > 0;

describe('the addon on a host', () => {
  it('lists devices as an array, empty when the kernel has no RDMA', () => {
    const devices = listDevices();
    expect(Array.isArray(devices)).toBe(true);
    if (hostHasRdma) expect(devices.length).toBeGreaterThan(0);
    else expect(devices).toEqual([]);
  });

  it('reports an unknown device as a VerbsError with errno name, number and call', () => {
    let caught: unknown;
    try {
      Context.open('no-such-device-0');
    } catch (e) {
      caught = e;
    }
    expect(caught).toBeInstanceOf(VerbsError);
    const e = caught as VerbsError;
    expect(['ENODEV', 'ENOSYS']).toContain(e.code);
    expect(e.errno).toBe(e.code === 'ENODEV' ? 19 : 38);
    expect(e.call).toMatch(/^ibv_(get_device_list|open_device)$/);
    expect(e.device).toBe('no-such-device-0');
    expect(e.message).toContain(e.code);
    expect(isVerbsError(e, e.code)).toBe(true);
    expect(isVerbsError(e, 'EINVAL')).toBe(false);
  });

  it('names errno values in the addon', () => {
    const native = addon();
    expect(native.errnoName(22)).toBe('EINVAL');
    expect(native.errnoName(16)).toBe('EBUSY');
    expect(native.errnoName(95)).toBe('EOPNOTSUPP');
    expect(native.errnoName(4000)).toBeUndefined();
  });

  it('refuses wrong argument types with a VerbsArgumentError naming the argument, never a crash', () => {
    // addon() registers the package's error classes with the addon, so even a direct call of a
    // native class gets the typed error (a bare addon with no classes registered throws TypeError).
    const native = addon();
    const fieldOf = (call: () => unknown): string => {
      try {
        call();
      } catch (e) {
        expect(e).toBeInstanceOf(VerbsArgumentError);
        return (e as VerbsArgumentError).field;
      }
      throw new Error('expected the call to throw');
    };
    expect(fieldOf(() => new native.NativeContext(42 as unknown as string))).toBe('name');
    const fake = {} as never;
    expect(fieldOf(() => new native.NativePd(fake))).toBe('context');
    expect(fieldOf(() => new native.NativeCq(fake, 16, true))).toBe('context');
    expect(fieldOf(() => new native.NativeMr(fake, Buffer.alloc(8), 1))).toBe('pd');
    expect(fieldOf(() => new native.NativeQp(fake, fake, fake, {}))).toBe('pd');
    expect(() => Context.open(undefined as unknown as string)).toThrow(VerbsArgumentError);
  });

  it('watches a file descriptor on the libuv loop and calls back when it is readable', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rdma-interop-fd-'));
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // O_RDWR on a FIFO never blocks on Linux and keeps both ends open.
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    const native = addon();
    let calls = 0;
    const readable = new Promise<number>((resolve) => {
      const watcher = new native.NativeFdWatcher(fd, (status) => {
        calls++;
        const byte = Buffer.alloc(1);
        readSync(fd, byte, 0, 1, null);
        watcher.stop();
        watcher.close();
        resolve(status === 0 ? byte[0]! : -status);
      });
      watcher.start();
      expect(watcher.active).toBe(true);
    });
    writeSync(fd, Buffer.from([0x5a]));
    expect(await readable).toBe(0x5a);
    expect(calls).toBe(1);
    closeSync(fd);
  });

  it('refuses to watch a closed descriptor with a VerbsError', () => {
    const native = addon();
    const fd = openSync(tmpdir(), 'r');
    closeSync(fd);
    expect(() => new native.NativeFdWatcher(fd, () => {})).toThrow(VerbsError);
  });

  // On a host with devices an event channel opens: no failure path to see (a listed skip).
  itUnless(hostHasRdma, 'this host has RDMA devices')(
    'refuses an event channel without RDMA with a VerbsError, not a crash',
    () => {
      const native = addon();
      try {
        new native.NativeEventChannel();
        expect.unreachable('an event channel needs /dev/infiniband/rdma_cm');
      } catch (e) {
        expect(e).toBeInstanceOf(VerbsError);
        expect((e as VerbsError).call).toBe('rdma_create_event_channel');
        expect((e as VerbsError).errno).toBeGreaterThan(0);
      }
    },
  );
});
