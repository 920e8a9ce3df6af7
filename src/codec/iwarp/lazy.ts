/**
 * A lazy view of one DDP segment carrying an RDMAP message: the bytes stay where they are
 * and each field is read when asked for, through the layout tables of layouts.ts. Nothing
 * is allocated per segment (one view is re-pointed at each segment); a bigint exists only
 * when a 64-bit field is read, and the typed message (decodeRdmapMessage) only when asked
 * for with `message()`.
 */
import { ByteView } from '../byte-view.js';
import type { DecodeResult } from '../errors.js';
import { ddpLayoutOf } from './ddp.js';
import {
  DDP_TAGGED_LAYOUT,
  DDP_UNTAGGED_LAYOUT,
  type HeaderField,
  type HeaderLayout,
  layoutField,
  RDMAP_CONTROL_V2_LAYOUT,
  readField,
  readFieldNumber,
} from './layouts.js';
import type { RdmapMessage } from './messages.js';
import { type RdmapOpcodeInfo, rdmapOpcodeInfo } from './opcodes.js';
import type { IwarpProfile } from './profiles.js';
import { decodeRdmapMessage } from './rdmap.js';
import { rdmapHeaderLayout } from './rdmap-hooks.js';

const TAGGED = layoutField(DDP_TAGGED_LAYOUT, 'tagged');
const LAST = layoutField(DDP_TAGGED_LAYOUT, 'last');
const RV = layoutField(DDP_TAGGED_LAYOUT, 'rdmaVersion');
const OPCODE_V1 = layoutField(DDP_TAGGED_LAYOUT, 'opcode');
const OPCODE_V2 = layoutField(RDMAP_CONTROL_V2_LAYOUT, 'opcode');
const STAG = layoutField(DDP_TAGGED_LAYOUT, 'stag');
const QN = layoutField(DDP_UNTAGGED_LAYOUT, 'queueNumber');
const MSN = layoutField(DDP_UNTAGGED_LAYOUT, 'messageSequenceNumber');
const MO = layoutField(DDP_UNTAGGED_LAYOUT, 'messageOffset');

/** A re-pointable view of one ULPDU (DDP segment). */
export class RdmapView extends ByteView {
  // `offset`: the DDP control byte; `length`: the segment's.

  /** True when the DDP header is there (14 bytes tagged, 18 untagged). */
  get headerPresent(): boolean {
    if (this.length < 1) return false;
    return this.length >= this.ddpLayout.length;
  }

  /** The DDP header layout: tagged or untagged, from the T bit. */
  get ddpLayout(): HeaderLayout {
    return ddpLayoutOf(this.bytes[this.offset] ?? 0);
  }

  get tagged(): boolean {
    return readFieldNumber(this.bytes, this.offset, TAGGED) !== 0;
  }

  get last(): boolean {
    return readFieldNumber(this.bytes, this.offset, LAST) !== 0;
  }

  get rdmaVersion(): number {
    return readFieldNumber(this.bytes, this.offset, RV);
  }

  /** The RDMAP opcode, read with the control layout of its RV (4 bits RV 1, 5 bits RV 2). */
  get opcode(): number {
    return this.rdmaVersion === 2
      ? readFieldNumber(this.bytes, this.offset + 1, OPCODE_V2)
      : readFieldNumber(this.bytes, this.offset, OPCODE_V1);
  }

  /** The opcode's row, or undefined for an undefined opcode. */
  get info(): RdmapOpcodeInfo | undefined {
    return rdmapOpcodeInfo(this.opcode);
  }

  /** STag of a tagged segment (undefined when untagged). */
  get stag(): number | undefined {
    return this.tagged ? readFieldNumber(this.bytes, this.offset, STAG) : undefined;
  }

  /** QN of an untagged segment (undefined when tagged). */
  get queueNumber(): number | undefined {
    return this.tagged ? undefined : readFieldNumber(this.bytes, this.offset, QN);
  }

  /** MSN of an untagged segment (undefined when tagged). */
  get messageSequenceNumber(): number | undefined {
    return this.tagged ? undefined : readFieldNumber(this.bytes, this.offset, MSN);
  }

  /** MO of an untagged segment (undefined when tagged). */
  get messageOffset(): number | undefined {
    return this.tagged ? undefined : readFieldNumber(this.bytes, this.offset, MO);
  }

  /** The RDMAP header's layout for this opcode (undefined: none, or an unknown opcode). */
  get rdmapLayout(): HeaderLayout | undefined {
    if (this.tagged) return undefined;
    const info = this.info;
    return info === undefined ? undefined : rdmapHeaderLayout(info, this.last);
  }

  /**
   * A field by its layout name: DDP header fields (`stag`, `queueNumber`, ...) and the
   * RDMAP header fields of this opcode (`requestIdentifier`, `sinkTaggedOffset`, ...). 64-bit
   * fields are bigint, flags boolean; undefined when the segment has no such field or is
   * too short to hold it.
   */
  field(name: string): number | bigint | boolean | undefined {
    if (!this.headerPresent) return undefined;
    const ddp = this.ddpLayout;
    const f = findField(ddp, name);
    if (f !== undefined) {
      if (this.rdmaVersion === 2 && (name === 'opcode' || name === 'rdmapReserved'))
        return readField(this.bytes, this.offset + 1, layoutField(RDMAP_CONTROL_V2_LAYOUT, name));
      return readField(this.bytes, this.offset, f);
    }
    const layout = this.rdmapLayout;
    if (layout === undefined) return undefined;
    const g = findField(layout, name);
    if (g === undefined) return undefined;
    const at = this.offset + ddp.length;
    if (at + layout.length > this.offset + this.length) return undefined;
    return readField(this.bytes, at, g);
  }

  /** The typed message (an object graph, allocated now), or why the segment is malformed. */
  message(profile?: IwarpProfile): DecodeResult<RdmapMessage> {
    return decodeRdmapMessage(
      this.bytes.subarray(this.offset, this.offset + this.length),
      profile === undefined ? {} : { profile },
    );
  }
}

const FIELD_INDEX = new Map<HeaderLayout, Map<string, HeaderField>>();

function findField(layout: HeaderLayout, name: string): HeaderField | undefined {
  let index = FIELD_INDEX.get(layout);
  if (index === undefined) {
    index = new Map(layout.fields.map((f) => [f.name, f]));
    FIELD_INDEX.set(layout, index);
  }
  return index.get(name);
}
