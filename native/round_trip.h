// What a round trip (round_trip.cc: run, one request posted and awaited) and its repeat
// (round_trip_repeat.cc: a pipelined stream of the same request) share: the stored
// request, the memory shared with JS and the checks every call makes.
#pragma once

#include <arpa/inet.h>

#include <memory>
#include <string>
#include <vector>

#include "clock.h"
#include "common.h"
#include "js_memory.h"

namespace rdma_interop {

constexpr size_t kWcWords = wc_word::kCount;

/// The memory shared with JS (js_memory.h: an external ArrayBuffer, or a V8-allocated one
/// looked up at each call). Offsets are part of the binding
/// (src/native/bindings.ts ROUND_TRIP_LAYOUT; a host test checks them against
/// `roundTripLayout`).
struct RoundTripBlock {
  uint64_t compareAdd = 0;  // FETCH_AND_ADD addend / CMP_AND_SWP compare value
  uint64_t swap = 0;
  uint64_t remoteAddr = 0;
  uint32_t immData = 0;  // host order; sent as htonl(immData)
  uint32_t reserved = 0;
  uint32_t wc[kWcWords] = {};  // the awaited completion, in NativeCq.poll's layout
  // Monotonic microseconds (clock.h: the TSC, on CLOCK_MONOTONIC's time line) just before
  // the last ibv_post_send (run) or the first one (repeat): consecutive values are a
  // loop's period without a timer call in it (perftest stamps its posts the same way).
  double postedAtUs = 0;
  // The same clock when repeat saw its last completion.
  double completedAtUs = 0;
};

struct RoundTripState {
  QpRef qp;
  CqPtr waitCq;
  bool waitRecv = false;  // wait for a receive on waitQpNum, else for the own completion
  uint32_t waitQpNum = 0;
  uint32_t signalEvery = 1;  // waitRecv: one signaled send every this many
  uint32_t unsignaled = 0;
  ibv_send_wr wr{};
  std::vector<ibv_sge> sges;
  SharedBlock memory;  // the block JS sees
  // The block for the call running now (BlockScope): on the V8-allocated path its address
  // is looked up at every call, since JS may have detached the ArrayBuffer in between.
  RoundTripBlock *block = nullptr;
  const FastClock &clock = FastClock::Get();
  int64_t timeoutTicks = 0;  // the round trip's timeout in clock ticks
  bool awaiting = false;  // posted, the awaited completion not seen yet
  // Signaled requests a repeat left outstanding (it timed out or failed): the next call
  // collects their completions before posting, so none is taken for its own.
  uint64_t staleSignaled = 0;
  bool running = false;
  bool released = false;
};
using RoundTripStatePtr = std::shared_ptr<RoundTripState>;

[[noreturn]] inline void ThrowClosedPart(Napi::Env env, const RoundTripState &s, const char *what) {
  ThrowVerbs(env, "ibv_post_send", s.qp.device, EBADF, what);
}

/// Refuses a call on a released round trip, a closed QP or CQ, or one already running.
inline void CheckRunnable(Napi::Env env, const RoundTripState &s) {
  if (s.released) ThrowClosedPart(env, s, "the round trip was released");
  if (!s.qp.owner->Live()) ThrowClosedPart(env, s, "queue pair is closed");
  if (s.waitCq->cq == nullptr || s.qp.sendCq->cq == nullptr)
    ThrowClosedPart(env, s, "completion queue is closed");
  if (s.running) ThrowVerbs(env, "ibv_post_send", s.qp.device, EBUSY, "the round trip is running");
}

/// Re-checks the SGEs (an MR closed since: its lkey could be reused) and copies the fields
/// JS wrote in the block into the stored request.
inline void ApplyBlock(Napi::Env env, RoundTripState &s) {
  size_t bad = 0;
  if (!InlineSgesRegistered(*s.qp.pd, s.sges, &bad))
    ThrowVerbs(env, "ibv_post_send", s.qp.device, EBADF,
               "sgList[" + std::to_string(bad) + "] is not inside a live MR of the QP's PD", 0);
  const RoundTripBlock &b = *s.block;
  switch (s.wr.opcode) {
    case IBV_WR_ATOMIC_FETCH_AND_ADD:
    case IBV_WR_ATOMIC_CMP_AND_SWP:
      s.wr.wr.atomic.remote_addr = b.remoteAddr;
      s.wr.wr.atomic.compare_add = b.compareAdd;
      s.wr.wr.atomic.swap = b.swap;
      break;
    default: s.wr.wr.rdma.remote_addr = b.remoteAddr; break;
  }
  s.wr.imm_data = htonl(b.immData);
}

/// Resolves the block for one call (VerbsError EBADF once JS detached it) and forgets it
/// when the call ends, however it ends.
struct BlockScope {
  RoundTripState &s;
  BlockScope(Napi::Env env, RoundTripState &state) : s(state) {
    s.block = static_cast<RoundTripBlock *>(s.memory.Data(env, "ibv_post_send"));
  }
  ~BlockScope() { s.block = nullptr; }
};

/// Clears `flag` when the scope ends, however it ends (a throw included).
struct ClearOnExit {
  bool &flag;
  ~ClearOnExit() { flag = false; }
};

/// Collects the completions of a repeat's outstanding signaled requests (staleSignaled),
/// stashing foreign ones; VerbsError ETIMEDOUT if they do not come within the timeout.
void CollectStale(Napi::Env env, RoundTripState &s);

/// repeat(count, window, batch) -> status (round_trip_repeat.cc).
napi_value RepeatCallback(napi_env env, napi_callback_info info);

}  // namespace rdma_interop
