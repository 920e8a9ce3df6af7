/**
 * Generates the Wireshark Lua plugin from the codec's tables (tables.ts, fields.ts): the
 * fields, the layouts, the opcode, AOpCode and Terminate tables, the profiles and the
 * ICRC's masks are written as Lua data; the Lua code below them only walks that data.
 *
 * How it hooks in: Wireshark 4.0's DDP/RDMAP dissector (packet-iwarp-ddp-rdmap.c) is
 * called by the MPA dissector by name, not through a table a plugin could take over, and
 * knows no opcode 0x8/0x9, reads an RV 2 opcode as its low 4 bits, and picks the Atomic
 * Request's data fields from the whole first word instead of the AOpCode. So the plugin is
 * a postdissector: for every MPA FPDU Wireshark found (`iwarp_mpa.ulpdulength`, whose
 * position gives the ULPDU) it decodes the DDP segment by the layouts, adding a field
 * only where Wireshark's own dissector did not already show the same field with the same
 * value in that segment. With Wireshark's DDP/RDMAP dissector disabled
 * (`--disable-protocol iwarp_ddp_rdmap`) the plugin shows the whole DDP/RDMAP header alone.
 * For RoCEv2 it checks the ICRC (IBTA Annex A17.3.3) of every packet Wireshark decoded as
 * InfiniBand over UDP.
 */
import { createRequire } from 'node:module';
import { type HeaderLayout, layoutField } from '../codec/iwarp/layouts.js';
import { type PluginField, type PluginLayout, type PluginModel, pluginModel } from './fields.js';
import { luaString, luaValue } from './lua.js';
import { CODEC_TABLES, type PluginTables } from './tables.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/**
 * The CRC-32 of the ICRC (IBTA Annex A17.3.3: the Ethernet CRC, as zlib's crc32, which
 * the codec uses), reflected polynomial.
 */
export const ICRC_POLYNOMIAL_REFLECTED = 0xedb88320;

/** The 256-entry table of the reflected CRC-32. */
function crcTable(): number[] {
  const table: number[] = [];
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (ICRC_POLYNOMIAL_REFLECTED ^ (c >>> 1)) >>> 0 : c >>> 1;
    table.push(c >>> 0);
  }
  return table;
}

/** The CRC table as Lua list rows, eight entries a row. */
function crcRows(): string {
  const hex = crcTable().map((n) => `0x${n.toString(16).padStart(8, '0')}`);
  const rows: string[] = [];
  for (let i = 0; i < hex.length; i += 8) rows.push(`  ${hex.slice(i, i + 8).join(', ')},`);
  return rows.join('\n');
}

function protoField(p: PluginField): string {
  const a = luaString(p.abbrev);
  const label = luaString(p.label);
  const blurb = luaString(p.description);
  const names = p.valueNames ?? 'nil';
  const mask = p.mask === undefined ? 'nil' : `0x${p.mask.toString(16)}`;
  switch (p.type) {
    case 'bool':
      return `ProtoField.bool(${a}, ${label}, ${p.unitBits ?? 'nil'}, nil, ${mask}, ${blurb})`;
    case 'string':
      return `ProtoField.string(${a}, ${label}, nil, ${blurb})`;
    case 'uint64':
      return `ProtoField.uint64(${a}, ${label}, base.HEX, nil, nil, ${blurb})`;
    default:
      return `ProtoField.${p.type}(${a}, ${label}, base.${p.base}, ${names}, ${mask}, ${blurb})`;
  }
}

/** A layout as Lua data: its length and its fields with their Wireshark names. */
function layoutData(p: PluginLayout, controlV2: HeaderLayout, tables: PluginTables): unknown {
  const controlNames = new Set(controlV2.fields.map((f) => f.name));
  const isDdp = p.layout === tables.ddpTagged || p.layout === tables.ddpUntagged;
  return {
    name: p.layout.name,
    length: p.layout.length,
    fields: p.fields.map((f) => ({
      name: f.field.name,
      abbrev: f.abbrev,
      offset: f.field.offset,
      unit: f.field.unit,
      bits: f.field.bits,
      shift: f.field.shift,
      flag: f.field.flag === true ? true : undefined,
      // The RV 1 control octet's fields, replaced by the RV 2 layout when RV = 2.
      control:
        isDdp && f.field.offset === CONTROL_OFFSET && controlNames.has(f.field.name)
          ? true
          : undefined,
      by_aopcode: f.byAOpCode,
      other_aopcode: f.otherAOpCode,
    })),
  };
}

/** The RDMAP control octet's offset in a DDP header (RFC 5040 §4.2: RsvdULP's first octet). */
const CONTROL_OFFSET = 1;

function headersData(
  headers: PluginModel['termRdma'],
  controlV2: HeaderLayout,
  tables: PluginTables,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [kind, p] of Object.entries(headers))
    if (p !== undefined) out[kind] = layoutData(p as PluginLayout, controlV2, tables);
  return out;
}

/** The Lua tables of opcodes, AOpCodes, Terminate codes and profiles. */
function protocolTables(t: PluginTables): string {
  const opcodes: Record<number, unknown> = {};
  const opcodeNames: Record<number, string> = {};
  for (const row of t.opcodes) {
    opcodes[row.opcode] = {
      name: row.name,
      kind: row.kind,
      family: row.family,
      tagged: row.tagged,
      qn: row.queueNumber,
      profiles: Object.fromEntries(row.profiles.map((p) => [p, true])),
    };
    opcodeNames[row.opcode] = row.name;
  }
  const aOpCodes: Record<number, unknown> = {};
  const aOpCodeNames: Record<number, string> = {};
  for (const row of t.atomicOpcodes) {
    aOpCodes[row.aOpCode] = {
      name: row.name,
      profiles: Object.fromEntries(row.profiles.map((p) => [p, true])),
    };
    aOpCodeNames[row.aOpCode] = row.name;
  }
  const qnVariants: Record<string, Record<number, number[]>> = {};
  for (const v of t.queueNumberVariants) {
    const byOpcode = qnVariants[v.profile] ?? {};
    qnVariants[v.profile] = byOpcode;
    byOpcode[v.opcode] = [...(byOpcode[v.opcode] ?? []), v.queueNumber];
  }
  const types: Record<number, Record<number, string>> = {};
  for (const e of t.terminateErrorTypes)
    types[e.layer] = { ...types[e.layer], [e.errorType]: e.name };
  const codes: Record<number, Record<number, Record<number, unknown>>> = {};
  for (const c of t.terminateCodes) {
    const byLayer = codes[c.layer] ?? {};
    codes[c.layer] = byLayer;
    byLayer[c.errorType] = { ...byLayer[c.errorType], [c.errorCode]: { id: c.id, name: c.name } };
  }
  const lines = [
    `local PROFILES = ${luaValue(t.profiles)}`,
    `local PROFILE_SOURCES = ${luaValue(t.profileSources)}`,
    `local DEFAULT_PROFILE = ${t.profiles.indexOf(t.defaultProfile) + 1}`,
    `-- The RV whose control octet is read with the V2 layout (draft-wood-storm-rdmap-ext-v2-00 §4.1).`,
    `local V2_RV = ${t.profileRdmaVersion['v2-draft']}`,
    `local CONTROL_OFFSET = ${CONTROL_OFFSET}`,
    `local OPCODES = ${luaValue(opcodes)}`,
    `local OPCODE_NAMES = ${luaValue(opcodeNames)}`,
    `local AOPCODES = ${luaValue(aOpCodes)}`,
    `local AOPCODE_NAMES = ${luaValue(aOpCodeNames)}`,
    `local QN_VARIANTS = ${luaValue(qnVariants)}`,
    `local TERM_LAYER_NAMES = ${luaValue(t.terminateLayers)}`,
    `local TERM_TYPES = ${luaValue(types)}`,
    `local TERM_CODES = ${luaValue(codes)}`,
    `-- Wireshark's checksum status values (proto.h PROTO_CHECKSUM_E_BAD, _GOOD, _UNVERIFIED).`,
    `local ICRC_STATUS_NAMES = { [0] = "invalid", [1] = "valid", [2] = "not checked" }`,
    `local ICRC = ${luaValue({
      pseudo_lrh_length: t.icrc.pseudoLrhLength,
      ipv4: Object.fromEntries(t.icrc.masked.ipv4.map((i) => [i, true])),
      ipv6: Object.fromEntries(t.icrc.masked.ipv6.map((i) => [i, true])),
      ipv6_first_byte: t.icrc.masked.ipv6FirstByte,
      udp: Object.fromEntries(t.icrc.masked.udp.map((i) => [i, true])),
      bth: Object.fromEntries(t.icrc.masked.bth.map((i) => [i, true])),
    })}`,
    `-- CRC-32, reflected polynomial 0x${ICRC_POLYNOMIAL_REFLECTED.toString(16)} (IBTA Annex A17.3.3).`,
    `local CRC_TABLE = { [0] =\n${crcRows()} }`,
  ];
  return lines.join('\n');
}

/** The codec field names the Lua reads values of (checked against the layouts here). */
function fieldNames(t: PluginTables): string {
  const terminate = t.headerLayouts.terminate;
  const atomic = t.headerLayouts['atomic-request'];
  if (terminate === undefined || atomic === undefined)
    throw new Error('the plugin needs the Terminate and Atomic Request layouts');
  const names = {
    opcode: layoutField(t.ddpUntagged, 'opcode').name,
    queue_number: layoutField(t.ddpUntagged, 'queueNumber').name,
    a_op_code: layoutField(atomic, 'aOpCode').name,
    layer: layoutField(terminate, 'layer').name,
    error_type: layoutField(terminate, 'errorType').name,
    error_code: layoutField(terminate, 'errorCode').name,
    ddp_header_included: layoutField(terminate, 'ddpHeaderIncluded').name,
    rdma_header_included: layoutField(terminate, 'rdmaHeaderIncluded').name,
  };
  return `local NAME = ${luaValue(names)}`;
}

/** The generated plugin's fields (the model the Lua is written from). */
export function wiresharkPluginFields(tables: PluginTables = CODEC_TABLES): readonly PluginField[] {
  return pluginModel(tables).fields;
}

/** The Lua source of the Wireshark plugin, generated from `tables` (default: the codec's). */
export function generateWiresharkPlugin(tables: PluginTables = CODEC_TABLES): string {
  const model = pluginModel(tables);
  const wiresharkNames = model.fields.filter((f) => f.wireshark).map((f) => f.abbrev);
  const fieldDefs = model.fields.map((f) => `F[${luaString(f.abbrev)}] = ${protoField(f)}`);
  const layouts = {
    ddp_tagged: layoutData(model.segment.ddpTagged, tables.controlV2, tables),
    ddp_untagged: layoutData(model.segment.ddpUntagged, tables.controlV2, tables),
    control_v2: layoutData(model.segment.controlV2, tables.controlV2, tables),
  };
  const termDdp = {
    ddp_tagged: layoutData(model.termDdp.ddpTagged, tables.controlV2, tables),
    ddp_untagged: layoutData(model.termDdp.ddpUntagged, tables.controlV2, tables),
    control_v2: layoutData(model.termDdp.controlV2, tables.controlV2, tables),
  };
  return `-- rdma-interop ${version}: Wireshark plugin for the RDMAP extensions (RFC 7306 Atomic
-- Operations and Immediate Data, the V2 draft's Send with Immediate and Read V2, the
-- draft-01 opcodes by preference), Terminate messages with their codes named and copied
-- headers decoded, and the RoCEv2 ICRC check.
--
-- GENERATED by \`rdma-interop wireshark-plugin\` from the codec's tables (src/codec/iwarp/
-- layouts.ts, opcodes.ts, terminate-codes.ts, profiles.ts, src/codec/roce/icrc.ts): do not
-- edit; regenerate. Fields: docs/wireshark.md. Works with Wireshark 4.0 (Lua 5.2) and later.
-- ${model.fields.length} fields.

local PLUGIN_VERSION = ${luaString(version)}
if set_plugin_info then
  set_plugin_info({
    version = PLUGIN_VERSION,
    description = "RFC 7306 / RDMAP V2 draft / Terminate decoding and RoCEv2 ICRC check (rdma-interop)",
  })
end

local floor = math.floor
-- Bit operations: bit32 in Lua 5.2 (Wireshark 4.0), the operators in Lua 5.3 and 5.4
-- (compiled from a string so that Lua 5.2 can parse this file).
local bxor, band, rshift
if bit32 then
  bxor, band, rshift = bit32.bxor, bit32.band, bit32.rshift
else
  bxor, band, rshift = load("return function(a, b) return a ~ b end, function(a, b) return a & b end, function(a, n) return a >> n end")()
end

${protocolTables(tables)}
${fieldNames(tables)}

-- Wireshark's own fields of the names the plugin reuses: the plugin adds its own only
-- where Wireshark did not show the same value in the same segment.
local WIRESHARK = {}
for _, abbrev in ipairs(${luaValue(wiresharkNames)}) do
  local ok, extractor = pcall(Field.new, abbrev)
  if ok then WIRESHARK[abbrev] = extractor end
end
local mpa_ulpdu_length = Field.new("iwarp_mpa.ulpdulength")
local f_udp = Field.new("udp")
local f_udp_length = Field.new("udp.length")
local f_ip = Field.new("ip")
local f_ipv6 = Field.new("ipv6")
local f_infiniband = Field.new("infiniband")

local P = Proto("rdma_interop", "rdma-interop: RDMAP extensions (RFC 7306, V2 draft) and RoCEv2 ICRC")
local F = {}
${fieldDefs.join('\n')}
local FIELD_LIST = {}
for _, f in pairs(F) do FIELD_LIST[#FIELD_LIST + 1] = f end
P.fields = FIELD_LIST

local E = {
  truncated = ProtoExpert.new("rdma_interop.truncated", "Header cut short", expert.group.MALFORMED, expert.severity.ERROR),
  opcode = ProtoExpert.new("rdma_interop.opcode_not_in_profile", "Opcode not defined in the selected profile", expert.group.PROTOCOL, expert.severity.WARN),
  queue = ProtoExpert.new("rdma_interop.queue_number", "Queue number not the one the opcode uses", expert.group.PROTOCOL, expert.severity.WARN),
  aopcode = ProtoExpert.new("rdma_interop.aopcode_reserved", "AOpCode reserved in the selected profile", expert.group.PROTOCOL, expert.severity.WARN),
  terminate = ProtoExpert.new("rdma_interop.terminate", "Terminate", expert.group.RESPONSE_CODE, expert.severity.NOTE),
  icrc = ProtoExpert.new("rdma_interop.icrc_invalid", "ICRC invalid", expert.group.CHECKSUM, expert.severity.ERROR),
}
P.experts = { E.truncated, E.opcode, E.queue, E.aopcode, E.terminate, E.icrc }

local profile_enum = {}
local profile_help = {}
for i, name in ipairs(PROFILES) do
  profile_enum[i] = { i, name, i }
  profile_help[i] = name .. ": " .. PROFILE_SOURCES[name]
end
P.prefs.profile = Pref.enum("RDMAP profile", DEFAULT_PROFILE,
  "Which document's opcode, AOpCode and queue-number tables to read RDMAP with (" .. table.concat(profile_help, "; ") .. ")", profile_enum, false)

local SEGMENT = ${luaValue(layouts)}
SEGMENT.headers = ${luaValue(headersData(model.segment.headers, tables.controlV2, tables))}
local TERM_DDP = ${luaValue(termDdp)}
local TERM_RDMA = ${luaValue(headersData(model.termRdma, tables.controlV2, tables))}

local function field_value(tvb, at, f)
  if f.bits == 64 then return tvb(at + f.offset, 8):uint64() end
  local word = tvb(at + f.offset, f.unit):uint()
  local v = word
  if f.bits < 32 then v = floor(word / 2 ^ f.shift) % 2 ^ f.bits end
  if f.flag then return v ~= 0 end
  return v
end

local function same_value(a, b)
  if type(a) == "userdata" or type(b) == "userdata" then return tostring(a) == tostring(b) end
  return a == b
end

local function shown_by_wireshark(abbrev, src, from, to, value)
  local extractor = WIRESHARK[abbrev]
  if extractor == nil then return false end
  for _, fi in ipairs({ extractor() }) do
    if fi.offset >= from and fi.offset < to and fi.source == src and same_value(fi.value, value) then
      return true
    end
  end
  return false
end

-- Adds the fields of \`layout\` at \`at\`; returns their values by codec name.
local function add_layout(tree, src, from, to, at, layout, a_op_code, skip_control)
  local values = {}
  for _, f in ipairs(layout.fields) do
    if not (skip_control and f.control) then
      local abbrev = f.abbrev
      if f.by_aopcode and a_op_code ~= nil then
        abbrev = f.by_aopcode[a_op_code] or f.other_aopcode or abbrev
      end
      local value = field_value(src, at, f)
      values[f.name] = value
      if not shown_by_wireshark(abbrev, src, from, to, value) then
        tree:add(F[abbrev], src(at + f.offset, f.unit))
      end
    end
  end
  return values
end

local function a_op_code_of(src, at, layout)
  for _, f in ipairs(layout.fields) do
    if f.name == NAME.a_op_code then return field_value(src, at, f) end
  end
  return nil
end

local function message_name(row, opcode)
  if row == nil then return string.format("Unknown opcode 0x%02x", opcode) end
  return row.name
end

-- The DDP header (and the RV 2 control octet) at \`at\`: its values and its opcode row.
local function add_ddp(tree, src, from, to, at, set)
  local tagged = src(at, 1):uint() >= 128
  local ddp = tagged and set.ddp_tagged or set.ddp_untagged
  if at + ddp.length > to then return nil end
  local v2 = floor(src(at + CONTROL_OFFSET, 1):uint() / 64) == V2_RV
  local values = add_layout(tree, src, from, to, at, ddp, nil, v2)
  if v2 then
    local control = add_layout(tree, src, from, to, at + CONTROL_OFFSET, set.control_v2)
    values[NAME.opcode] = control[NAME.opcode]
  end
  return values, ddp, tagged
end

local function dissect_terminate_tail(tree, src, from, to, h, length, values)
  local layer, etype, code = values[NAME.layer], values[NAME.error_type], values[NAME.error_code]
  local layer_name = TERM_LAYER_NAMES[layer] or string.format("Layer %d", layer)
  local type_name = (TERM_TYPES[layer] or {})[etype] or string.format("Error Type %d", etype)
  local info = ((TERM_CODES[layer] or {})[etype] or {})[code]
  local code_name = info and info.name or string.format("Error Code 0x%02x", code)
  local text = layer_name .. " / " .. type_name .. " / " .. code_name
  tree:add(F["rdma_interop.term.error"], src(h, length), text)
  if info then tree:add(F["rdma_interop.term.code_id"], src(h, length), info.id) end
  tree:add_proto_expert_info(E.terminate, "Terminate: " .. text)
  local p = h + length
  local copied_row = nil
  if values[NAME.ddp_header_included] then
    if p + 2 > to then tree:add_proto_expert_info(E.truncated, "D is set but no DDP Segment Length follows"); return end
    tree:add(F["rdma_interop.term.ddp_segment_length"], src(p, 2))
    p = p + 2
    if p >= to then tree:add_proto_expert_info(E.truncated, "D is set but no DDP header follows"); return end
    local sub = tree:add(src(p, to - p), "Terminated DDP header")
    local copied, ddp = add_ddp(sub, src, from, to, p, TERM_DDP)
    if copied == nil then sub:add_proto_expert_info(E.truncated, "the copied DDP header is cut short"); return end
    sub:set_len(ddp.length)
    local opcode = copied[NAME.opcode]
    copied_row = OPCODES[opcode]
    sub:add(F["rdma_interop.term.ddp.message"], src(p + CONTROL_OFFSET, 1), message_name(copied_row, opcode))
    p = p + ddp.length
  end
  if values[NAME.rdma_header_included] and p < to then
    -- RFC 5040 §4.8: the copied RDMA header is a Read Request's unless the copied DDP
    -- header names another message.
    local layout = TERM_RDMA[copied_row and copied_row.family or "read-request"]
    local sub = tree:add(src(p, to - p), "Terminated RDMA header")
    if layout ~= nil and p + layout.length <= to then
      add_layout(sub, src, from, to, p, layout, a_op_code_of(src, p, layout))
    end
  end
end

local function dissect_segment(src, at, len, root, pinfo, profile)
  local from, to = at, at + len
  local tree = root:add(P, src(at, len))
  local values, ddp, tagged = add_ddp(tree, src, from, to, at, SEGMENT)
  if values == nil then tree:add_proto_expert_info(E.truncated, "DDP header cut short"); return end
  local opcode = values[NAME.opcode]
  local row = OPCODES[opcode]
  local name = message_name(row, opcode)
  tree:add(F["rdma_interop.message"], src(at + CONTROL_OFFSET, 1), name)
  tree:append_text(": " .. name)
  pinfo.cols.info:append(" [" .. name .. "]")
  if row == nil then return end
  if not row.profiles[profile] then
    tree:add_proto_expert_info(E.opcode, name .. " is not defined in " .. profile)
  end
  if tagged then return end
  local qn = values[NAME.queue_number]
  local ok = qn == row.qn
  for _, other in ipairs((QN_VARIANTS[profile] or {})[opcode] or {}) do ok = ok or qn == other end
  if not ok and row.qn ~= nil then
    tree:add_proto_expert_info(E.queue, string.format("%s uses queue %d, not %d", name, row.qn, qn))
  end
  local layout = SEGMENT.headers[row.family]
  -- V2 draft §5.3: only the last segment of a Send with Immediate Data carries it.
  local last = floor(src(at, 1):uint() / 64) % 2 == 1
  if row.family == "send-immediate" and not last then layout = nil end
  if layout == nil then return end
  local h = at + ddp.length
  if h + layout.length > to then
    tree:add_proto_expert_info(E.truncated, layout.name .. " header needs " .. layout.length .. " bytes")
    return
  end
  local a = a_op_code_of(src, h, layout)
  local header = add_layout(tree, src, from, to, h, layout, a)
  if a ~= nil then
    local arow = AOPCODES[a]
    if arow ~= nil and arow.profiles[profile] then
      tree:add(F["rdma_interop.atomic.operation"], src(h, 4), arow.name)
    else
      tree:add(F["rdma_interop.atomic.operation"], src(h, 4), string.format("Reserved AOpCode %d", a))
      tree:add_proto_expert_info(E.aopcode, string.format("AOpCode %d is reserved in %s", a, profile))
    end
  end
  if row.family == "terminate" then
    dissect_terminate_tail(tree, src, from, to, h, layout.length, header)
  end
end

-- RoCEv2 ICRC (IBTA Annex A17.3.3): CRC-32 over 8 bytes of ones, the IP header, the UDP
-- header and the BTH with the variant bytes masked to ones, then the rest of the packet.
local function icrc_of(tvb, ip, ip_length, icrc_at)
  local crc = 0xffffffff
  local function update(b) crc = bxor(CRC_TABLE[band(bxor(crc, b), 0xff)], rshift(crc, 8)) end
  for _ = 1, ICRC.pseudo_lrh_length do update(0xff) end
  local bytes = tvb(ip, icrc_at - ip):bytes()
  local v6 = floor(bytes:get_index(0) / 16) == 6
  for i = 0, icrc_at - ip - 1 do
    local b = bytes:get_index(i)
    local u = i - ip_length
    if i < ip_length then
      if v6 then
        if i == 0 then b = bxor(bxor(b, ICRC.ipv6_first_byte), band(b, ICRC.ipv6_first_byte))
        elseif ICRC.ipv6[i] then b = 0xff end
      elseif ICRC.ipv4[i] then b = 0xff end
    elseif u < 8 then
      if ICRC.udp[u] then b = 0xff end
    elseif ICRC.bth[u - 8] then b = 0xff end
    update(b)
  end
  return bxor(crc, 0xffffffff) % 2 ^ 32
end

local function check_icrc(tvb, root)
  local ib = { f_infiniband() }
  if #ib == 0 then return end
  local udps, lengths = { f_udp() }, { f_udp_length() }
  local udp, udp_length = udps[#udps], lengths[#lengths]
  if udp == nil or udp_length == nil then return end
  local ip = nil
  for _, fi in ipairs({ f_ip() }) do if fi.offset < udp.offset then ip = fi end end
  for _, fi in ipairs({ f_ipv6() }) do if fi.offset < udp.offset and (ip == nil or fi.offset > ip.offset) then ip = fi end end
  local tree = root:add(P, tvb(udp.offset, 0))
  tree:append_text(": RoCEv2 ICRC")
  local icrc_at = udp.offset + udp_length.value - 4
  if ip == nil or udp_length.value < 8 + 12 + 4 or icrc_at + 4 > tvb:len() then
    tree:add(F["rdma_interop.icrc.status"], tvb(udp.offset, 0), 2)
    return
  end
  local computed = icrc_of(tvb, ip.offset, udp.offset - ip.offset, icrc_at)
  local stored = tvb(icrc_at, 4):le_uint()
  local range = tvb(icrc_at, 4)
  -- Shown in the byte order Wireshark shows the stored ICRC in (infiniband.invariant.crc).
  local shown = band(rshift(computed, 24), 0xff) + band(rshift(computed, 16), 0xff) * 0x100
    + band(rshift(computed, 8), 0xff) * 0x10000 + band(computed, 0xff) * 0x1000000
  tree:add(F["rdma_interop.icrc.computed"], range, shown)
  local item = tree:add(F["rdma_interop.icrc.status"], range, computed == stored and 1 or 0)
  if computed ~= stored then item:add_proto_expert_info(E.icrc) end
end

function P.dissector(tvb, pinfo, root)
  local profile = PROFILES[P.prefs.profile] or PROFILES[DEFAULT_PROFILE]
  for _, fi in ipairs({ mpa_ulpdu_length() }) do
    local src = fi.source
    local at = fi.offset + 2
    local len = fi.value
    if at + len > src:len() then len = src:len() - at end
    if len > 0 then dissect_segment(src, at, len, root, pinfo, profile) end
  end
  check_icrc(tvb, root)
end

register_postdissector(P)
`;
}
