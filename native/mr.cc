// Memory region over a Node Buffer: ibv_reg_mr / ibv_dereg_mr. The MR holds a strong
// reference to its Buffer, so the memory the device may touch cannot be collected
// while the registration exists.
#include "common.h"

namespace rdma_interop {

namespace {

struct MrHandle {
  ibv_mr *mr = nullptr;
  PdPtr pd;
  ~MrHandle() {
    if (mr != nullptr) ibv_dereg_mr(mr);
  }
};

class Mr : public Napi::ObjectWrap<Mr> {
 public:
  static Napi::Function Init(Napi::Env env) {
    return DefineClass(env, "NativeMr",
                       {
                           InstanceMethod<&Mr::Close>("close"),
                           InstanceAccessor<&Mr::Closed>("closed"),
                           InstanceAccessor<&Mr::Lkey>("lkey"),
                           InstanceAccessor<&Mr::Rkey>("rkey"),
                           InstanceAccessor<&Mr::Addr>("addr"),
                           InstanceAccessor<&Mr::Length>("length"),
                       });
  }

  // new NativeMr(pd, buffer, accessFlags)
  explicit Mr(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Mr>(info) {
    Napi::Env env = info.Env();
    PdPtr pd = PdFromJs(info[0], "ibv_reg_mr");
    if (!info[1].IsBuffer()) throw Napi::TypeError::New(env, "ibv_reg_mr: expected a Buffer");
    uint32_t access = ReadU32(info[2], "access");
    auto buf = info[1].As<Napi::Buffer<uint8_t>>();
    ibv_mr *mr = ibv_reg_mr(pd->pd, buf.Data(), buf.Length(), static_cast<int>(access));
    if (mr == nullptr) ThrowVerbs(env, "ibv_reg_mr", pd->ctx->name, errno != 0 ? errno : ENOMEM);
    handle_ = std::make_unique<MrHandle>();
    handle_->mr = mr;
    handle_->pd = pd;
    device_ = pd->ctx->name;
    buffer_ = Napi::Persistent(buf);
    lkey_ = mr->lkey;
    rkey_ = mr->rkey;
    addr_ = reinterpret_cast<uintptr_t>(mr->addr);
    length_ = mr->length;
  }

 private:
  Napi::Value Closed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), !handle_);
  }
  Napi::Value Lkey(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), lkey_); }
  Napi::Value Rkey(const Napi::CallbackInfo &info) { return Napi::Number::New(info.Env(), rkey_); }
  Napi::Value Addr(const Napi::CallbackInfo &info) { return U64(info.Env(), addr_); }
  Napi::Value Length(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), static_cast<double>(length_));
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!handle_) return env.Undefined();
    CheckIbv(env, "ibv_dereg_mr", device_, ibv_dereg_mr(handle_->mr));
    handle_->mr = nullptr;
    handle_.reset();
    // Only now may the Buffer go: the device can no longer reach it.
    buffer_.Reset();
    return env.Undefined();
  }

  // Declared before handle_ so that it is released after the deregistration.
  Napi::Reference<Napi::Buffer<uint8_t>> buffer_;
  std::unique_ptr<MrHandle> handle_;
  std::string device_;
  uint32_t lkey_ = 0, rkey_ = 0;
  uint64_t addr_ = 0;
  size_t length_ = 0;
};

}  // namespace

void RegisterMr(Napi::Env env, Napi::Object exports) { exports.Set("NativeMr", Mr::Init(env)); }

}  // namespace rdma_interop
