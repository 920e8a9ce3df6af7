// Protection domain: ibv_alloc_pd / ibv_dealloc_pd.
#include "resource.h"

namespace rdma_interop {

namespace {

class Pd : public Resource<Pd, PdHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativePd", "pd", "protection domain", "ibv_dealloc_pd",
                                          "the PD still has live MRs, QPs or AHs"};

  // new NativePd(context) or new NativePd(External<PdPtr>).
  explicit Pd(const Napi::CallbackInfo &info) : Resource(info) {
    if (Adopted(info)) return;
    ContextPtr ctx = ContextFromJs(info[0], "ibv_alloc_pd");
    auto h = std::make_shared<PdHandle>();
    h->pd = ibv_alloc_pd(ctx->ctx);
    if (h->pd == nullptr) ThrowVerbs(info.Env(), "ibv_alloc_pd", ctx->device, errno != 0 ? errno : ENOMEM);
    h->ctx = ctx;
    h->device = ctx->device;
    ctx->children.Add(h);
    Attach(h);
  }
};

}  // namespace

PdPtr PdFromJs(const Napi::Value &v, const char *call) { return Pd::FromJs(v, call); }

}  // namespace rdma_interop
