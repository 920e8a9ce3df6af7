// A round trip's request posted `count` times as a pipelined stream, in ONE native call
// (issue 13): the form for a message rate. perftest's ib_*_bw keeps up to tx-depth
// requests outstanding, posts one per call, asks a completion every cq-mod requests and
// polls in batches; here the same request is re-posted in place from a chain of `batch`
// copies built once per call (the last of each chain signaled: one doorbell and one
// completion per chain), at most `window` requests outstanding, completions polled up to
// kPollBatch at a time. No allocation, N-API transition or JS work per request.
//
// A failed completion stops the posting; the flushed rest is collected (until the CQ has
// been quiet for kQuietNs) and the failed one is returned. A timeout leaves the signaled
// requests still outstanding counted in staleSignaled: the next run or repeat collects
// them first, so a late completion is never taken for a new request's.
#include <algorithm>

#include "round_trip.h"
#include "wc_words.h"

namespace rdma_interop {

namespace {

constexpr int kPollBatch = 16;
constexpr int64_t kQuietNs = 10 * 1000 * 1000;  // CQ quiet this long: the flush is over

bool IsOwn(const RoundTripState &s, const ibv_wc &wc) {
  return wc.qp_num == s.qp.qp->qp_num && wc.wr_id == s.wr.wr_id;
}

[[noreturn]] void ThrowTimeout(Napi::Env env, const RoundTripState &s) {
  ThrowVerbs(env, "ibv_poll_cq", s.qp.device, ETIMEDOUT,
             "the repeated requests did not complete within the round trip's timeout (the "
             "next call collects them before posting)");
}

// After a failed completion: collects own completions (the flushed rest) until the CQ is
// quiet; foreign ones go to the stash.
void DrainAfterFailure(RoundTripState &s, CqHandle &cq) {
  const int64_t quiet = s.clock.TicksIn(kQuietNs);
  int64_t quietSince = s.clock.Ticks();
  int64_t deadline = quietSince + s.timeoutTicks;
  for (;;) {
    ibv_wc wcs[kPollBatch];
    int n = ibv_poll_cq(cq.cq, kPollBatch, wcs);
    int64_t now = s.clock.Ticks();
    if (n < 0 || now >= deadline) return;
    if (n == 0) {
      if (now - quietSince >= quiet) return;
      continue;
    }
    quietSince = now;
    for (int i = 0; i < n; i++)
      if (!IsOwn(s, wcs[i])) cq.stash.push_back(wcs[i]);
  }
}

uint32_t Repeat(Napi::Env env, RoundTripState &s, uint64_t count, uint32_t window, uint32_t batch) {
  CheckRunnable(env, s);
  BlockScope scope(env, s);
  if (s.waitRecv)
    ThrowVerbs(env, "ibv_post_send", s.qp.device, EINVAL,
               "a round trip that waits for a receive (untilReceiveOn) does not repeat", 0);
  if (s.awaiting)
    ThrowVerbs(env, "ibv_post_send", s.qp.device, EBUSY,
               "a timed-out run is still awaited: run() collects it first", 0);
  if (s.staleSignaled != 0) CollectStale(env, s);
  ApplyBlock(env, s);
  // The chain: `batch` copies of the request, the last one signaled. A shorter final
  // chunk posts the chain's tail, so its last request is the signaled one too.
  std::vector<ibv_send_wr> chain(batch, s.wr);
  for (uint32_t i = 0; i < batch; i++) {
    chain[i].next = i + 1 < batch ? &chain[i + 1] : nullptr;
    if (i + 1 < batch) chain[i].send_flags &= ~static_cast<unsigned>(IBV_SEND_SIGNALED);
    else chain[i].send_flags |= IBV_SEND_SIGNALED;
  }
  s.running = true;
  ClearOnExit unmark{s.running};
  CqHandle &cq = *s.waitCq;
  uint64_t posted = 0;
  uint64_t done = 0;
  int64_t deadline = 0;
  s.block->postedAtUs = s.clock.Microseconds(s.clock.Ticks());
  ibv_wc last{};
  while (done < count) {
    while (posted < count) {
      uint64_t n = std::min<uint64_t>(batch, count - posted);
      if (posted - done + n > window) break;
      ibv_send_wr *badWr = nullptr;
      int ret = ibv_post_send(s.qp.qp, &chain[batch - n], &badWr);
      if (ret != 0) {
        // What was posted before stays outstanding: the next call collects it.
        s.staleSignaled = (posted - done + batch - 1) / batch;
        ThrowVerbs(env, "ibv_post_send", s.qp.device, ret > 0 ? ret : -ret,
                   "a repeated request was refused after " + std::to_string(posted) + " posted", 0);
      }
      posted += n;
    }
    ibv_wc wcs[kPollBatch];
    int n = ibv_poll_cq(cq.cq, kPollBatch, wcs);
    if (n < 0) ThrowVerbs(env, "ibv_poll_cq", s.qp.device, n == -1 ? EIO : -n);
    if (n == 0) {
      int64_t now = s.clock.Ticks();
      if (deadline == 0) {
        deadline = now + s.timeoutTicks;
      } else if (now >= deadline) {
        s.staleSignaled = (posted - done + batch - 1) / batch;
        ThrowTimeout(env, s);
      }
      continue;
    }
    deadline = 0;
    for (int i = 0; i < n; i++) {
      const ibv_wc &wc = wcs[i];
      if (!IsOwn(s, wc)) {
        cq.stash.push_back(wc);
        continue;
      }
      if (wc.status != IBV_WC_SUCCESS) {
        WriteWcWords(s.block->wc, wc);
        // Stash what this poll returned after it, then collect the flushed rest.
        for (int j = i + 1; j < n; j++)
          if (!IsOwn(s, wcs[j])) cq.stash.push_back(wcs[j]);
        DrainAfterFailure(s, cq);
        s.block->completedAtUs = s.clock.Microseconds(s.clock.Ticks());
        return wc.status;
      }
      // Requests complete in order: one signaled completion retires its whole chain.
      done += std::min<uint64_t>(batch, count - done);
      last = wc;
    }
  }
  s.block->completedAtUs = s.clock.Microseconds(s.clock.Ticks());
  WriteWcWords(s.block->wc, last);
  return 0;
}

}  // namespace

void CollectStale(Napi::Env env, RoundTripState &s) {
  CqHandle &cq = *s.waitCq;
  for (auto it = cq.stash.begin(); it != cq.stash.end() && s.staleSignaled != 0;) {
    if (IsOwn(s, *it)) {
      it = cq.stash.erase(it);
      s.staleSignaled--;
    } else {
      ++it;
    }
  }
  int64_t deadline = s.clock.Ticks() + s.timeoutTicks;
  while (s.staleSignaled != 0) {
    ibv_wc wcs[kPollBatch];
    int n = ibv_poll_cq(cq.cq, kPollBatch, wcs);
    if (n < 0) ThrowVerbs(env, "ibv_poll_cq", s.qp.device, n == -1 ? EIO : -n);
    for (int i = 0; i < n; i++) {
      if (IsOwn(s, wcs[i]) && s.staleSignaled != 0) s.staleSignaled--;
      else if (!IsOwn(s, wcs[i])) cq.stash.push_back(wcs[i]);
    }
    if (n == 0 && s.clock.Ticks() >= deadline) ThrowTimeout(env, s);
  }
}

// repeat(count, window, batch) -> the status of the last completion (0: all succeeded) or
// of the failed one; its fields are in the block. The TS side (RoundTrip.repeat) checked
// the numbers: count >= 1, 1 <= batch <= window <= the QP's send queue depth.
napi_value RepeatCallback(napi_env env, napi_callback_info info) {
  void *data = nullptr;
  size_t argc = 3;
  napi_value argv[3] = {};
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, &data) != napi_ok) return nullptr;
  try {
    Napi::Env e(env);
    double count = 0;
    if (argc < 3 || napi_get_value_double(env, argv[0], &count) != napi_ok || count < 1 ||
        count > 9007199254740991.0 || count != static_cast<double>(static_cast<uint64_t>(count)))
      ThrowArgument(e, "count", "must be an integer >= 1");
    uint32_t window = ReadU32(Napi::Value(env, argv[1]), "window", 65536);
    uint32_t batch = ReadU32(Napi::Value(env, argv[2]), "batch", 65536);
    if (batch == 0 || window < batch)
      ThrowArgument(e, "batch", "must be at least 1 and at most window");
    uint32_t status = Repeat(e, **static_cast<RoundTripStatePtr *>(data),
                             static_cast<uint64_t>(count), window, batch);
    napi_value out = nullptr;
    napi_create_uint32(env, status, &out);
    return out;
  } catch (const Napi::Error &err) {
    ThrowIntoJs(err);
    return nullptr;
  }
}

}  // namespace rdma_interop
