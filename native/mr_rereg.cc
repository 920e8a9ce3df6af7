// ibv_rereg_mr: changes an MR's translation (its memory), its PD and its access flags in
// place (man ibv_rereg_mr). libibverbs checks the request (libibverbs/verbs.c
// ibv_rereg_mr: unknown flags, a translation without address or length, access given
// without IBV_REREG_MR_CHANGE_ACCESS: IBV_REREG_MR_ERR_INPUT, errno EINVAL) and then calls
// the provider's rereg_mr; a provider without one answers through libibverbs/dummy_ops.c
// rereg_mr (errno EOPNOTSUPP, IBV_REREG_MR_ERR_INPUT). librxe and libsiw set none
// (rdma-core 44.0 and 56.1, providers/rxe/rxe.c rxe_ctx_ops, providers/siw/siw.c
// siw_context_ops), so on rxe and siw the kernel's rxe_rereg_user_mr is never reached
// through this call.
#include "mr_handle.h"

namespace rdma_interop {

namespace {

constexpr uint32_t kKnownFlags =
    IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;

const char *ReregErrName(int ret) {
  switch (ret) {
    case IBV_REREG_MR_ERR_INPUT:
      return "IBV_REREG_MR_ERR_INPUT";
    case IBV_REREG_MR_ERR_DONT_FORK_NEW:
      return "IBV_REREG_MR_ERR_DONT_FORK_NEW";
    case IBV_REREG_MR_ERR_DO_FORK_OLD:
      return "IBV_REREG_MR_ERR_DO_FORK_OLD";
    case IBV_REREG_MR_ERR_CMD:
      return "IBV_REREG_MR_ERR_CMD";
    case IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW:
      return "IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW";
    default:
      return "ibv_rereg_mr failed";
  }
}

}  // namespace

Napi::Object RereqMr(const Napi::CallbackInfo &info, const std::shared_ptr<MrHandle> &h,
                     Napi::Object *view) {
  Napi::Env env = info.Env();
  uint32_t flags = ReadU32(info[0], "flags");
  if (flags == 0 || (flags & ~kKnownFlags) != 0)
    ThrowArgument(env, "flags", "must name one or more of TRANSLATION, PD, ACCESS");
  // Every argument is read before the call: a wrong one changes nothing.
  PdPtr pd;
  if ((flags & IBV_REREG_MR_CHANGE_PD) != 0) {
    pd = PdFromJs(info[1], "ibv_rereg_mr");
    if (pd->ctx != h->pd->ctx)
      ThrowArgument(env, "pd", "ibv_rereg_mr: the PD belongs to another device context");
  }
  void *addr = nullptr;
  size_t length = 0;
  Napi::Object buffer;
  if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0) {
    if (!info[2].IsBuffer()) ThrowArgument(env, "buffer", "ibv_rereg_mr: expected a Buffer");
    buffer = info[2].As<Napi::Object>();
    auto buf = info[2].As<Napi::Buffer<uint8_t>>();
    addr = buf.Data();
    length = buf.Length();
    if (length == 0) ThrowArgument(env, "buffer", "ibv_rereg_mr: the Buffer is empty");
  }
  int access = 0;
  if ((flags & IBV_REREG_MR_CHANGE_ACCESS) != 0) access = static_cast<int>(ReadU32(info[3], "access"));

  uint32_t oldLkey = h->mr->lkey;
  errno = 0;
  int ret = ibv_rereg_mr(h->mr, static_cast<int>(flags), pd ? pd->pd : nullptr, addr, length, access);
  // IBV_REREG_MR_ERR_DO_FORK_OLD: the registration changed; only the madvise that gives
  // the old range back to fork() failed (libibverbs/verbs.c). The MR is the new one.
  if (ret != 0 && ret != IBV_REREG_MR_ERR_DO_FORK_OLD)
    ThrowVerbs(env, "ibv_rereg_mr", h->device, errno != 0 ? errno : EIO, ReregErrName(ret));

  h->pd->mrs.erase(oldLkey);
  if (pd) {
    h->pd->children.Remove(h.get());
    pd->children.Add(h);
    h->pd = pd;
  }
  if ((flags & IBV_REREG_MR_CHANGE_TRANSLATION) != 0) {
    // The old memory is no longer registered: the addon's own goes when JS lets it go.
    h->memory.reset();
    *view = buffer;
  }
  h->pd->mrs[h->mr->lkey] = {reinterpret_cast<uintptr_t>(h->mr->addr), h->mr->length};
  Napi::Object out = Napi::Object::New(env);
  out.Set("lkey", Napi::Number::New(env, h->mr->lkey));
  out.Set("rkey", Napi::Number::New(env, h->mr->rkey));
  out.Set("addr", U64(env, reinterpret_cast<uintptr_t>(h->mr->addr)));
  out.Set("length", Napi::Number::New(env, static_cast<double>(h->mr->length)));
  return out;
}

}  // namespace rdma_interop
