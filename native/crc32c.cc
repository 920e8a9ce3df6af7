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

#if defined(__x86_64__)
// x^a * b modulo the polynomial, both in the reflected bit order (x^0 is the top bit),
// bit by bit (zlib's multmodp). Only for building the shift tables below.
uint32_t MultModP(uint32_t a, uint32_t b) {
  uint32_t m = 1u << 31;
  uint32_t p = 0;
  for (;;) {
    if ((a & m) != 0) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) != 0 ? (b >> 1) ^ kPoly : b >> 1;
  }
  return p;
}

// x^(8n) modulo the polynomial: what a CRC register is multiplied by when n zero bytes
// pass through it.
uint32_t XPow8n(size_t n) {
  uint32_t result = 1u << 31;  // x^0
  uint32_t base = 1u << 23;    // x^8
  while (n != 0) {
    if ((n & 1) != 0) result = MultModP(result, base);
    base = MultModP(base, base);
    n >>= 1;
  }
  return result;
}

// Multiplies a CRC register by a fixed x^(8n) with four byte-indexed tables (the product
// is linear in the register, so it is the XOR of the products of its four bytes).
struct ShiftTable {
  uint32_t t[4][256];
  explicit ShiftTable(uint32_t factor) {
    for (int i = 0; i < 4; i++)
      for (uint32_t b = 0; b < 256; b++) t[i][b] = MultModP(factor, b << (8 * i));
  }
  uint32_t Apply(uint32_t c) const {
    return t[0][c & 0xff] ^ t[1][(c >> 8) & 0xff] ^ t[2][(c >> 16) & 0xff] ^ t[3][c >> 24];
  }
};
#endif

#ifdef RDMA_INTEROP_HAVE_SSE42_PATH
// The CRC32 instruction has a latency of three cycles and a throughput of one per cycle,
// so one dependent chain runs at a third of what the unit can do. Long inputs are cut into
// blocks of three streams of kStreamBytes, CRCed side by side (three independent chains,
// as the Linux kernel's crc32c-pcl-intel does), and the three registers are combined: the
// register after A then B is reg(A) * x^(8|B|) + reg_from_zero(B).
#if defined(__x86_64__)
constexpr size_t kStreamBytes = 4096;
#endif

__attribute__((target("sse4.2"))) uint32_t Crc32cSse42(const uint8_t *p, size_t len,
                                                       uint32_t crc) {
#if defined(__x86_64__)
  uint64_t c = crc;
  if (len >= 3 * kStreamBytes) {
    static const ShiftTable shift(XPow8n(kStreamBytes));
    while (len >= 3 * kStreamBytes) {
      uint64_t c1 = 0;
      uint64_t c2 = 0;
      const uint8_t *p1 = p + kStreamBytes;
      const uint8_t *p2 = p + 2 * kStreamBytes;
      for (size_t i = 0; i < kStreamBytes; i += 8) {
        uint64_t w0;
        uint64_t w1;
        uint64_t w2;
        std::memcpy(&w0, p + i, 8);  // unaligned-safe loads
        std::memcpy(&w1, p1 + i, 8);
        std::memcpy(&w2, p2 + i, 8);
        c = _mm_crc32_u64(c, w0);
        c1 = _mm_crc32_u64(c1, w1);
        c2 = _mm_crc32_u64(c2, w2);
      }
      uint32_t r = shift.Apply(static_cast<uint32_t>(c)) ^ static_cast<uint32_t>(c1);
      c = shift.Apply(r) ^ static_cast<uint32_t>(c2);
      p += 3 * kStreamBytes;
      len -= 3 * kStreamBytes;
    }
  }
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
