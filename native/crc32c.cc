// CRC32c for the addon (see crc32c.h). The hardware path uses the SSE4.2 CRC32
// instruction, whose polynomial is Castagnoli's (the one MPA uses, RFC 5044 §4.4); it is
// compiled with a target attribute so the rest of the addon needs no -msse4.2, and chosen
// at run time with __builtin_cpu_supports.
#include "crc32c.h"

#include <cmath>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <nmmintrin.h>
#define RDMA_INTEROP_HAVE_SSE42_PATH 1
#endif

namespace rdma_interop {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;  // reflected Castagnoli polynomial

struct Table {
  uint32_t t[256];
  Table() {
    for (uint32_t n = 0; n < 256; n++) {
      uint32_t c = n;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPoly : c >> 1;
      t[n] = c;
    }
  }
};

uint32_t Crc32cPortable(const uint8_t *p, size_t len, uint32_t crc) {
  static const Table table;
  for (size_t i = 0; i < len; i++) crc = table.t[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
  return crc;
}

#ifdef RDMA_INTEROP_HAVE_SSE42_PATH
__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t *p, size_t len,
                                                       uint32_t crc) {
#if defined(__x86_64__)
  uint64_t c = crc;
  while (len >= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);  // unaligned-safe load
    c = _mm_crc32_u64(c, word);
    p += 8;
    len -= 8;
  }
  crc = static_cast<uint32_t>(c);
#endif
  while (len > 0) {
    crc = _mm_crc32_u8(crc, *p++);
    len--;
  }
  return crc;
}

bool HaveSse42() {
  static const bool have = __builtin_cpu_supports("sse4.2");
  return have;
}
#endif

}  // namespace

uint32_t Crc32c(const uint8_t *data, size_t len, uint32_t seed) {
  uint32_t crc = ~seed;
#ifdef RDMA_INTEROP_HAVE_SSE42_PATH
  if (HaveSse42()) return ~Crc32cSse42(data, len, crc);
#endif
  return ~Crc32cPortable(data, len, crc);
}

namespace {

Napi::Value Crc32cJs(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsTypedArray() ||
      info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
    Napi::TypeError::New(env, "crc32c: data must be a Uint8Array").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  uint32_t seed = 0;
  if (info.Length() >= 2 && !info[1].IsUndefined()) {
    if (!info[1].IsNumber()) {
      Napi::TypeError::New(env, "crc32c: seed must be a number").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    double s = info[1].As<Napi::Number>().DoubleValue();
    if (!(s >= 0 && s <= 4294967295.0) || std::floor(s) != s) {
      Napi::RangeError::New(env, "crc32c: seed must be an integer in 0..2^32-1")
          .ThrowAsJavaScriptException();
      return env.Undefined();
    }
    seed = static_cast<uint32_t>(s);
  }
  Napi::Uint8Array data = info[0].As<Napi::Uint8Array>();
  uint32_t crc = Crc32c(data.Data(), data.ByteLength(), seed);
  return Napi::Number::New(env, static_cast<double>(crc));
}

}  // namespace

void RegisterCrc32c(Napi::Env env, Napi::Object exports) {
  exports.Set("crc32c", Napi::Function::New(env, Crc32cJs, "crc32c"));
}

}  // namespace rdma_interop
