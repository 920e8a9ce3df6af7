// Bound calls: the hot calls of the everyday loop (Qp.postSend's packed post, Cq.poll's
// native poll) as plain N-API functions bound to their state, reading and writing a block
// of memory the addon owns. Under TCG an ObjectWrap method call costs about 4 us of
// N-API work before it does anything (unwrap `this`, check and open the typed-array
// argument, read each number through its checked reader: measured in the guest,
// 2026-11-29: an empty NativeCq.poll 4.2-4.4 us, an accessor 1.4-1.8 us), which was a
// tenth of a FetchAdd through postSend + pollUntil. A bound call reads its arguments as
// plain doubles and touches no object: the round trip (round_trip.cc) was first to do so.
//
// Safety: the block is shared by the function's state and the ArrayBuffer JS sees (on the
// external path co-owned, on the V8-allocated path held by reference and looked up at each
// call, js_memory.h), so neither a detached ArrayBuffer nor a collected function leaves
// the other a dangling pointer; what the state needs of its owner (a Qp's scratch vectors) it keeps alive with
// a strong reference, dropped by the function's finalizer.
#pragma once

#include <cmath>
#include <memory>
#include <vector>

#include "common.h"
#include "js_memory.h"

namespace rdma_interop {

/// Memory shared with JS as an ArrayBuffer of u32 words (js_memory.h: external, or
/// V8-allocated and looked up at each call).
struct WordBlock {
  SharedBlock memory;
  size_t words = 0;
  /// `words` zeroed words; the ArrayBuffer JS sees.
  Napi::ArrayBuffer Create(Napi::Env env, size_t n) {
    Napi::ArrayBuffer ab;
    memory.Create(env, n * sizeof(uint32_t), &ab);
    words = n;
    return ab;
  }
  /// The words for this call (VerbsError EBADF from `call` once JS detached them).
  uint32_t *Data(napi_env env, const char *call) const {
    return static_cast<uint32_t *>(memory.Data(env, call));
  }
};

/// A function calling `cb` with `state` as its data; the finalizer deletes the state.
template <typename State>
Napi::Function BindCall(Napi::Env env, const char *name, napi_callback cb, std::unique_ptr<State> state) {
  napi_value fn = nullptr;
  if (napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, state.get(), &fn) != napi_ok)
    throw Napi::Error::New(env, "napi_create_function failed");
  State *raw = state.release();
  if (napi_add_finalizer(
          env, fn, raw, [](napi_env e, void *p, void *) { static_cast<State *>(p)->Finalize(e); delete static_cast<State *>(p); },
          nullptr, nullptr) != napi_ok) {
    raw->Finalize(env);
    delete raw;
    throw Napi::Error::New(env, "napi_add_finalizer failed");
  }
  return Napi::Function(env, fn);
}

/// The bound call's arguments (at most N) and its state.
template <typename State, size_t N>
struct BoundArgs {
  State *state = nullptr;
  napi_value argv[N] = {};
  size_t argc = N;
  BoundArgs(napi_env env, napi_callback_info info) {
    void *data = nullptr;
    if (napi_get_cb_info(env, info, &argc, argv, nullptr, &data) != napi_ok) return;
    state = static_cast<State *>(data);
  }
};

/// A bound call's body run with its state and arguments; a thrown Napi::Error becomes the
/// JS exception (as every N-API entry point must: no C++ exception crosses into V8).
template <typename State, size_t N, typename Body>
napi_value RunBound(napi_env env, napi_callback_info info, Body body) {
  BoundArgs<State, N> args(env, info);
  if (args.state == nullptr) return nullptr;
  try {
    return body(*args.state, args.argv);
  } catch (const Napi::Error &e) {
    ThrowIntoJs(e);
    return nullptr;
  }
}

/// Argument `v` as an integer in [0, max]: one N-API call (a non-number or anything out of
/// range is a VerbsArgumentError, as ReadU32 says it).
inline uint32_t BoundU32(napi_env env, napi_value v, const char *what, uint32_t max) {
  double d = 0;
  if (v == nullptr || napi_get_value_double(env, v, &d) != napi_ok)
    ThrowArgument(Napi::Env(env), what, "must be a number");
  if (!std::isfinite(d) || std::floor(d) != d || d < 0 || d > static_cast<double>(max))
    ThrowArgument(Napi::Env(env), what, "must be an integer in [0, " + std::to_string(max) + "]");
  return static_cast<uint32_t>(d);
}

}  // namespace rdma_interop
