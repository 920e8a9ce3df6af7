// Receive-then-repost (issue 34): "poll the receive completions that came, post as many
// receives again" in ONE native call, the loop of a receiver that keeps its queue full
// (perftest's ib_send_bw server: poll a batch, repost each completed receive,
// perftest send_bw's run_iter_bw_server). Written with Cq.pollUntilCount + PreparedRecv.post
// it is two N-API crossings per batch, each a few microseconds under TCG against about
// 14 us per 8-byte Send of perftest's (docs/figures.md).
//
// The receive is parsed once by the parser every receive post uses (work_request.h:
// RecvChain::Unpack of the words the TS layer's RecvPacker writes); each repost links
// copies of it, numbered in the refill's own wr_id space (the high word is the refill's
// tag: a completion is the refill's when its wr_id's high word is the tag and it is a
// receive or failed). Completions of anything else on the CQ go to its stash, which
// NativeCq.poll, round trips and exchanges take first: nothing is lost on a shared CQ.
//
// Checked on every call: the refill was not released, the SRQ (or QP) and the CQ are
// live, every SGE of the receive lies in a live MR of the queue's PD (an lkey of a closed
// MR could be reused). A failed receive completion stops the call (its words in the
// block) and is not replaced: its QP is in error.
//
// One bound function (bound_call.h) serves every operation: call(op, a, b, c).
//   op 0 post(count):                      post `count` copies (the first fill)
//   op 1 repost(max, spinLimit):           busy-poll until at least one receive
//                                          completion came (or spinLimit empty polls in a
//                                          row: returns 0 with none), take up to `max`,
//                                          repost as many
//   op 2 repostUntil(count, batch, spinLimit): repeat until `count` receive completions
//                                          were taken and reposted, polling up to `batch`
//                                          at a time and reposting what each poll took;
//                                          spinLimit empty polls in a row: ETIMEDOUT
//   op 3 release()
// -> 0, or the failed completion's status (1..255: it is in the block). The block's
// `taken` says how many successful receive completions the call took (and reposted).
#include <errno.h>

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "bound_call.h"
#include "common.h"
#include "js_memory.h"
#include "wc_words.h"
#include "work_request.h"

namespace rdma_interop {

namespace {

enum Op : uint32_t { kPost = 0, kRepost = 1, kRepostUntil = 2, kRelease = 3 };

/// Completions one ibv_poll_cq takes at most (and `batch` / `max` at most).
constexpr uint32_t kMaxBatch = 256;

/// The memory shared with JS (src/verbs/recv-refill-native.ts RECV_REFILL_LAYOUT,
/// checked against `recvRefillLayout` by a host test).
struct RefillBlock {
  uint32_t wc[wc_word::kCount] = {};  // the failed receive completion
  uint32_t outstanding = 0;  // receives posted and not completed (JS lowers it for one
                             // polled elsewhere: Srq.retire)
  uint32_t taken = 0;        // successful receive completions the last call took
};

struct RefillState {
  SrqPtr srq;                 // set for an SRQ's refill
  QpRef qp;                   // set for a QP's own receive queue
  CqPtr cq;
  PdPtr pd;
  std::string device;
  RecvChain recv;                   // one request: the template
  std::vector<ibv_recv_wr> copies;  // linked copies for one post
  uint32_t tagHigh = 0;             // the high word of every copy's wr_id
  uint32_t next = 0;                // the low word of the next copy's
  bool released = false;
  SharedBlock memory;
  RefillBlock *block = nullptr;  // for the call running now
  void Finalize(napi_env) { memory.Release(); }

  bool OnSrq() const { return srq != nullptr; }
  bool QueueLive() const { return OnSrq() ? srq->Live() : qp.owner->Live(); }
  const char *PostCall() const { return OnSrq() ? "ibv_post_srq_recv" : "ibv_post_recv"; }
};

void CheckUsable(Napi::Env env, const RefillState &s) {
  const char *call = s.PostCall();
  if (s.released) ThrowVerbs(env, call, s.device, EBADF, "the receive refill was released");
  if (!s.QueueLive())
    ThrowVerbs(env, call, s.device, EBADF, s.OnSrq() ? "the SRQ is closed" : "queue pair is closed");
  if (!s.cq->Live()) ThrowVerbs(env, "ibv_poll_cq", s.device, EBADF, "completion queue is closed");
  size_t bad = 0;
  if (!InlineSgesRegistered(*s.pd, s.recv.sges[0], &bad))
    ThrowVerbs(env, call, s.device, EBADF,
               "recv sgList[" + std::to_string(bad) + "] is not inside a live MR of the queue's PD");
}

/// Posts `count` copies; a refusal throws, the copies before it counted as outstanding.
void PostCopies(Napi::Env env, RefillState &s, uint32_t count) {
  if (count == 0) return;
  const ibv_recv_wr &tmpl = s.recv.wrs[0];
  if (s.copies.size() < count) s.copies.resize(count);
  for (uint32_t i = 0; i < count; i++) {
    ibv_recv_wr &wr = s.copies[i];
    wr = tmpl;
    wr.wr_id = (static_cast<uint64_t>(s.tagHigh) << 32) | s.next++;
    wr.next = i + 1 < count ? &s.copies[i + 1] : nullptr;
  }
  ibv_recv_wr *bad = nullptr;
  int ret = s.OnSrq() ? ibv_post_srq_recv(s.srq->srq, s.copies.data(), &bad)
                      : ibv_post_recv(s.qp.qp, s.copies.data(), &bad);
  if (ret != 0) {
    long posted = bad != nullptr ? bad - s.copies.data() : 0;
    s.block->outstanding += static_cast<uint32_t>(posted);
    ThrowVerbs(env, s.PostCall(), s.device, ret > 0 ? ret : -ret,
               "receive copy #" + std::to_string(posted) + " refused", static_cast<int>(posted));
  }
  s.block->outstanding += count;
}

bool Ours(const RefillState &s, const ibv_wc &wc) {
  if (static_cast<uint32_t>(wc.wr_id >> 32) != s.tagHigh) return false;
  if (!s.OnSrq() && wc.qp_num != s.qp.qp->qp_num) return false;
  // A failed completion carries no valid opcode.
  return wc.status != IBV_WC_SUCCESS || (wc.opcode & IBV_WC_RECV) != 0;
}

/// Takes `wc`, the refill's: true when it is a failure (written to the block).
bool Take(RefillState &s, const ibv_wc &wc, uint32_t *taken) {
  if (s.block->outstanding > 0) s.block->outstanding--;
  if (wc.status == IBV_WC_SUCCESS) {
    ++*taken;
    return false;
  }
  WriteWcWords(s.block->wc, wc);
  return true;
}

/// Up to `max` of the refill's completions from the CQ's stash (earlier ones first);
/// true when one failed.
bool FromStash(RefillState &s, uint32_t max, uint32_t *taken) {
  std::deque<ibv_wc> &stash = s.cq->stash;
  for (auto it = stash.begin(); it != stash.end() && *taken < max;) {
    if (!Ours(s, *it)) {
      ++it;
      continue;
    }
    ibv_wc wc = *it;
    it = stash.erase(it);
    if (Take(s, wc, taken)) return true;
  }
  return false;
}

/// One ibv_poll_cq of up to `max - *taken`: the refill's are taken (a failure stops the
/// taking: 1), the others stashed; a negative provider error throws.
int PollPass(Napi::Env env, RefillState &s, uint32_t max, uint32_t *taken) {
  ibv_wc wcs[kMaxBatch];
  int n = ibv_poll_cq(s.cq->cq, static_cast<int>(max - *taken), wcs);
  if (n < 0) ThrowVerbs(env, "ibv_poll_cq", s.device, n == -1 ? EIO : -n);
  int failed = 0;
  for (int i = 0; i < n; i++) {
    if (failed != 0 || !Ours(s, wcs[i])) {
      s.cq->stash.push_back(wcs[i]);
      continue;
    }
    if (Take(s, wcs[i], taken)) failed = 1;
  }
  return failed;
}

/// The wait's end with a failure: the status to return (the block holds the completion).
uint32_t Failed(const RefillState &s) {
  uint32_t status = s.block->wc[wc_word::kStatus];
  return status == 0 ? 1 : status;
}

/// Polls until at least one of the refill's receive completions came (up to `max`), or
/// `spinLimit` empty polls in a row passed; reposts what it took. Returns the status.
uint32_t Repost(Napi::Env env, RefillState &s, uint32_t max, uint32_t spinLimit, uint32_t *taken) {
  uint32_t got = 0;
  bool failed = FromStash(s, max, &got);
  for (uint32_t empty = 0; !failed && got == 0;) {
    uint32_t before = got;
    failed = PollPass(env, s, max, &got) != 0;
    if (got != before || failed) break;
    if (empty++ >= spinLimit) break;
  }
  // Every successful receive taken is replaced, even when a later one failed.
  PostCopies(env, s, got);
  *taken += got;
  return failed ? Failed(s) : 0;
}

uint32_t RepostUntil(Napi::Env env, RefillState &s, uint32_t count, uint32_t batch, uint32_t spinLimit) {
  uint32_t total = 0;
  while (total < count) {
    uint32_t want = count - total < batch ? count - total : batch;
    uint32_t before = total;
    uint32_t status = Repost(env, s, want, spinLimit, &total);
    s.block->taken = total;
    if (status != 0) return status;
    // Repost comes back with nothing only after spinLimit empty polls in a row.
    if (total == before)
      ThrowVerbs(env, "ibv_poll_cq", s.device, ETIMEDOUT,
                 "no receive completion within spinLimit empty polls (" + std::to_string(total) + " of " +
                     std::to_string(count) + " taken and reposted)");
  }
  return 0;
}

/// Resolves the block for one call and forgets it when the call ends, however it ends.
struct BlockScope {
  RefillState &s;
  BlockScope(napi_env env, RefillState &state) : s(state) {
    s.block = static_cast<RefillBlock *>(s.memory.Data(env, state.PostCall()));
  }
  ~BlockScope() { s.block = nullptr; }
};

napi_value RefillCall(napi_env env, napi_callback_info info) {
  return RunBound<RefillState, 4>(env, info, [env](RefillState &s, napi_value *argv) {
    Napi::Env e(env);
    uint32_t op = BoundU32(env, argv[0], "op", kRelease);
    uint32_t result = 0;
    if (op == kRelease) {
      s.released = true;
    } else {
      CheckUsable(e, s);
      BlockScope scope(env, s);
      switch (op) {
        case kPost: {
          uint32_t count = BoundU32(env, argv[1], "count", 0xffff);
          if (count == 0) ThrowArgument(e, "count", "must be at least 1");
          PostCopies(e, s, count);
          break;
        }
        case kRepost: {
          uint32_t max = BoundU32(env, argv[1], "max", kMaxBatch);
          if (max == 0) ThrowArgument(e, "max", "must be at least 1");
          uint32_t spinLimit = BoundU32(env, argv[2], "spinLimit", 0xffffffffu);
          uint32_t taken = 0;
          s.block->taken = 0;
          result = Repost(e, s, max, spinLimit, &taken);
          s.block->taken = taken;
          break;
        }
        case kRepostUntil: {
          uint32_t count = BoundU32(env, argv[1], "count", 0xffffffffu);
          uint32_t batch = BoundU32(env, argv[2], "batch", kMaxBatch);
          if (batch == 0) ThrowArgument(e, "batch", "must be at least 1");
          uint32_t spinLimit = BoundU32(env, argv[3], "spinLimit", 0xffffffffu);
          s.block->taken = 0;
          result = RepostUntil(e, s, count, batch, spinLimit);
          break;
        }
        default: break;
      }
    }
    napi_value out = nullptr;
    napi_create_uint32(env, result, &out);
    return out;
  });
}

// createRecvRefill(queue, onSrq, cq, recvWords, tagHigh)
//   queue: a NativeSrq (onSrq) or a NativeQp (its own receive queue)
//   recvWords: one receive request packed by the TS layer's RecvPacker (recv_word)
//   tagHigh: the high word of every copy's wr_id (the TS layer's tag for this refill)
// -> { call(op, a, b, c): number, memory: ArrayBuffer }
Napi::Value CreateRecvRefill(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  auto s = std::make_unique<RefillState>();
  if (!info[1].IsBoolean()) ThrowArgument(env, "onSrq", "must be a boolean");
  bool onSrq = info[1].As<Napi::Boolean>().Value();
  if (onSrq) {
    s->srq = SrqFromJs(info[0], "ibv_post_srq_recv");
    s->pd = s->srq->pd;
    s->device = s->srq->device;
  } else {
    s->qp = QpRefFromJs(info[0], "ibv_post_recv");
    s->pd = s->qp.pd;
    s->device = s->qp.device;
  }
  s->cq = CqFromJs(info[2], "ibv_poll_cq");
  if (s->cq->ctx != s->pd->ctx) ThrowArgument(env, "cq", "the CQ belongs to another device context");
  if (!onSrq && s->cq != s->qp.recvCq) ThrowArgument(env, "cq", "not the QP's receive CQ");
  s->recv.Unpack(env, info[3], Napi::Number::New(env, 1));
  s->tagHigh = ReadU32(info[4], "tagHigh");
  CheckUsable(env, *s);

  Napi::ArrayBuffer ab;
  s->memory.Create(env, sizeof(RefillBlock), &ab);
  new (s->memory.Data(env, s->PostCall())) RefillBlock();
  Napi::Object out = Napi::Object::New(env);
  out.Set("memory", ab);
  out.Set("call", BindCall(env, "recvRefill", &RefillCall, std::move(s)));
  return out;
}

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("createRecvRefill", Napi::Function::New(env, CreateRecvRefill, "createRecvRefill"));
  Napi::Object layout = Napi::Object::New(env);
  layout.Set("wc", static_cast<double>(offsetof(RefillBlock, wc)));
  layout.Set("outstanding", static_cast<double>(offsetof(RefillBlock, outstanding)));
  layout.Set("taken", static_cast<double>(offsetof(RefillBlock, taken)));
  layout.Set("bytes", static_cast<double>(sizeof(RefillBlock)));
  layout.Set("maxBatch", static_cast<double>(kMaxBatch));
  exports.Set("recvRefillLayout", layout);
}

[[maybe_unused]] const bool kRegistered = (Registrars().push_back(&Register), true);

}  // namespace

}  // namespace rdma_interop
