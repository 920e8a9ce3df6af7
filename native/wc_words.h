// The fixed u32 layout a completion is copied out in (wc_word:: indices, common.h): the
// one copy-out NativeCq.poll (cq.cc) and a round trip's shared block (round_trip.cc) use.
#pragma once

#include "common.h"

namespace rdma_interop {

inline void WriteWcWords(uint32_t *w, const ibv_wc &wc) {
  using namespace wc_word;
  w[kWrIdLow] = static_cast<uint32_t>(wc.wr_id);
  w[kWrIdHigh] = static_cast<uint32_t>(wc.wr_id >> 32);
  w[kStatus] = wc.status;
  w[kOpcode] = wc.opcode;
  w[kVendorErr] = wc.vendor_err;
  w[kByteLen] = wc.byte_len;
  w[kImmDataRaw] = wc.imm_data;  // raw: network-order bytes read as a host u32
  w[kQpNum] = wc.qp_num;
  w[kSrcQp] = wc.src_qp;
  w[kWcFlags] = wc.wc_flags;
  w[kPkeyIndex] = wc.pkey_index;
  w[kSlid] = wc.slid;
  w[kSl] = wc.sl;
  w[kDlidPathBits] = wc.dlid_path_bits;
}

}  // namespace rdma_interop
