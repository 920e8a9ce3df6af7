// The CQ verbs beyond create/poll/notify (cq.cc): ibv_resize_cq, and the extended CQ
// (ibv_create_cq_ex, polled with ibv_start_poll / ibv_next_poll / ibv_end_poll and the
// ibv_wc_read_* accessors). Exported as free functions over NativeCq objects:
//   resizeCq(cq, cqe) -> the cqe granted
//   createCqEx(context, cqe, withChannel, wcFlags) -> NativeCq
//   pollCqEx(cq, words, timestamps, max) -> n
// pollCqEx writes the completion words NativeCq.poll writes (wc_word:: indices) and, per
// completion, [completion_ts, completion_wallclock_ns] into a BigUint64Array (0 where the
// CQ was not made with that flag).
#include <fcntl.h>

#include <algorithm>

#include "cq_ext.h"
#include "wc_words.h"

namespace rdma_interop {

namespace {

constexpr size_t kWcWords = wc_word::kCount;
constexpr uint64_t kKnownWcFlags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
                                   IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;

Napi::Value ResizeCq(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  CqPtr h = CqFromJs(info[0], "ibv_resize_cq");
  uint32_t cqe = ReadU32(info[1], "cqe", 0x7fffffff);
  if (cqe == 0) ThrowArgument(env, "cqe", "must be an integer in [1, 2^31 - 1]");
  // libibverbs' dummy_ops.c resize_cq returns EOPNOTSUPP for a provider without one (libsiw).
  CheckIbv(env, "ibv_resize_cq", h->device, ibv_resize_cq(h->cq, static_cast<int>(cqe)));
  return Napi::Number::New(env, h->cq->cqe);
}

Napi::Value CreateCqEx(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  ContextPtr ctx = ContextFromJs(info[0], "ibv_create_cq_ex");
  uint32_t cqe = ReadU32(info[1], "cqe", 0x7fffffff);
  if (!info[2].IsBoolean()) ThrowArgument(env, "withChannel", "must be a boolean");
  bool withChannel = info[2].As<Napi::Boolean>().Value();
  uint32_t extra = ReadU32(info[3], "wcFlags");
  if ((extra & ~kKnownWcFlags) != 0)
    ThrowArgument(env, "wcFlags", "only the standard fields and the two timestamps are read");
  auto h = std::make_shared<CqHandle>();
  h->ctx = ctx;
  h->device = ctx->device;
  if (withChannel) {
    auto ch = std::make_shared<CompChannelHandle>();
    ch->ctx = ctx;
    ch->channel = ibv_create_comp_channel(ctx->ctx);
    if (ch->channel == nullptr)
      ThrowVerbs(env, "ibv_create_comp_channel", h->device, errno != 0 ? errno : ENOMEM);
    int flags = fcntl(ch->channel->fd, F_GETFL);  // non-blocking, as cq.cc's
    if (flags < 0 || fcntl(ch->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
      ThrowVerbs(env, "fcntl", h->device, errno);
    h->channel = ch;
  }
  ibv_cq_init_attr_ex attr{};
  attr.cqe = cqe;
  attr.channel = h->channel ? h->channel->channel : nullptr;
  // The standard fields always: each ibv_wc_read_* below is a provider function pointer
  // that is set only for the fields asked for (librxe rxe_create_cq_ex).
  attr.wc_flags = IBV_WC_STANDARD_FLAGS | extra;
  errno = 0;
  h->ex = ibv_create_cq_ex(ctx->ctx, &attr);
  if (h->ex == nullptr) ThrowVerbs(env, "ibv_create_cq_ex", h->device, errno != 0 ? errno : ENOMEM);
  h->cq = ibv_cq_ex_to_cq(h->ex);
  h->wcFlags = attr.wc_flags;
  ctx->children.Add(h);
  return NewCqObject(env, h);
}

// One completion at the CQ's current position, read field by field.
void ReadCurrent(const CqHandle &h, uint32_t *w, uint64_t *ts) {
  using namespace wc_word;
  ibv_cq_ex *cq = h.ex;
  std::fill(w, w + kWcWords, 0u);
  w[kWrIdLow] = static_cast<uint32_t>(cq->wr_id);
  w[kWrIdHigh] = static_cast<uint32_t>(cq->wr_id >> 32);
  w[kStatus] = cq->status;
  w[kVendorErr] = ibv_wc_read_vendor_err(cq);
  w[kQpNum] = ibv_wc_read_qp_num(cq);
  ts[0] = ts[1] = 0;
  // man ibv_create_cq_ex: for a completion in error only wr_id, status, qp_num and
  // vendor_err are valid.
  if (cq->status != IBV_WC_SUCCESS) return;
  w[kOpcode] = ibv_wc_read_opcode(cq);
  w[kByteLen] = ibv_wc_read_byte_len(cq);
  w[kWcFlags] = ibv_wc_read_wc_flags(cq);
  w[kImmDataRaw] = (w[kWcFlags] & IBV_WC_WITH_IMM) != 0 ? ibv_wc_read_imm_data(cq) : 0;
  w[kSrcQp] = ibv_wc_read_src_qp(cq);
  w[kSlid] = ibv_wc_read_slid(cq);
  w[kSl] = ibv_wc_read_sl(cq);
  w[kDlidPathBits] = ibv_wc_read_dlid_path_bits(cq);
  if ((h.wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP) != 0) ts[0] = ibv_wc_read_completion_ts(cq);
  if ((h.wcFlags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK) != 0)
    ts[1] = ibv_wc_read_completion_wallclock_ns(cq);
}

Napi::Value PollCqEx(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  CqPtr h = CqFromJs(info[0], "ibv_start_poll");
  if (h->ex == nullptr)
    ThrowArgument(env, "cq", "ibv_start_poll: the CQ was not made by ibv_create_cq_ex");
  if (!info[1].IsTypedArray() || info[1].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array)
    ThrowArgument(env, "completions", "pollEx needs a Uint32Array");
  if (!info[2].IsTypedArray() ||
      info[2].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
    ThrowArgument(env, "timestamps", "pollEx needs a BigUint64Array");
  auto words = info[1].As<Napi::Uint32Array>();
  auto stamps = info[2].As<Napi::TypedArrayOf<uint64_t>>();
  size_t max = std::min(words.ElementLength() / kWcWords, stamps.ElementLength() / 2);
  max = std::min<size_t>(max, ReadU32(info[3], "max", 65536));
  if (max == 0) ThrowArgument(env, "completions", "the arrays hold no completion");
  size_t n = 0;
  // Completions a round trip set aside (cq.cc's stash) come first; they have no timestamp.
  while (!h->stash.empty() && n < max) {
    WriteWcWords(words.Data() + n * kWcWords, h->stash.front());
    stamps.Data()[2 * n] = stamps.Data()[2 * n + 1] = 0;
    h->stash.pop_front();
    n++;
  }
  if (n == max) return Napi::Number::New(env, static_cast<double>(n));
  ibv_poll_cq_attr attr{};
  int ret = ibv_start_poll(h->ex, &attr);
  if (ret == ENOENT) return Napi::Number::New(env, static_cast<double>(n));
  if (ret != 0) ThrowVerbs(env, "ibv_start_poll", h->device, ret > 0 ? ret : -ret);
  for (;;) {
    ReadCurrent(*h, words.Data() + n * kWcWords, stamps.Data() + 2 * n);
    n++;
    if (n == max) break;
    ret = ibv_next_poll(h->ex);
    if (ret == ENOENT) break;
    if (ret != 0) {
      ibv_end_poll(h->ex);
      ThrowVerbs(env, "ibv_next_poll", h->device, ret > 0 ? ret : -ret);
    }
  }
  ibv_end_poll(h->ex);
  return Napi::Number::New(env, static_cast<double>(n));
}

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("resizeCq", Napi::Function::New(env, ResizeCq, "resizeCq"));
  exports.Set("createCqEx", Napi::Function::New(env, CreateCqEx, "createCqEx"));
  exports.Set("pollCqEx", Napi::Function::New(env, PollCqEx, "pollCqEx"));
}

[[maybe_unused]] const bool kRegistered = (Registrars().push_back(&Register), true);

}  // namespace

}  // namespace rdma_interop
