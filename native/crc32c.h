// CRC32c (Castagnoli) for the rdma_interop addon: SSE4.2 when the CPU has it, a portable
// table otherwise. Used by the TypeScript codec (src/codec/crc32c.ts) for MPA CRCs
// (RFC 5044 §4.4). The addon's init calls RegisterCrc32c.
#pragma once

#include <napi.h>

#include <cstddef>
#include <cstdint>

namespace rdma_interop {

/// CRC32c of `len` bytes, continuing from `seed` (a previous result; 0 to start).
/// Standard pre- and post-inversion, so Crc32c("123456789", 9, 0) == 0xE3069283.
uint32_t Crc32c(const uint8_t *data, size_t len, uint32_t seed);

/// Adds `crc32c(data: Uint8Array, seed?: number): number` to `exports`.
/// Wrong argument types throw TypeError; a seed outside 0..2^32-1 throws RangeError.
void RegisterCrc32c(Napi::Env env, Napi::Object exports);

}  // namespace rdma_interop
