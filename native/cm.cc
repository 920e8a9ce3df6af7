// rdma_cm: the event channel (non-blocking fd, watched on the libuv loop by the JS
// side) and the connection identifier. Required for iWARP, where a QP reaches RTS only
// through the connection manager. rdma_disconnect runs on the libuv thread pool, since
// it can block for a long time (measured: 100 s on rxe when both ends disconnect in turn).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>

#include <vector>

#include "resource.h"

namespace rdma_interop {

namespace {

std::string DeviceOf(const rdma_cm_id *id) {
  if (id != nullptr && id->verbs != nullptr && id->verbs->device != nullptr)
    return ibv_get_device_name(id->verbs->device);
  return "rdma_cm";
}

// Parses an IPv4 or IPv6 literal; the caller reports a failure as EINVAL.
bool ParseAddress(const std::string &ip, uint16_t port, sockaddr_storage &out) {
  std::memset(&out, 0, sizeof out);
  auto *v4 = reinterpret_cast<sockaddr_in *>(&out);
  if (inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    return true;
  }
  auto *v6 = reinterpret_cast<sockaddr_in6 *>(&out);
  if (inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    return true;
  }
  return false;
}

std::string ReadString(const Napi::Value &v, const char *what) {
  if (!v.IsString()) ThrowArgument(v.Env(), what, "must be a string");
  return v.As<Napi::String>();
}

// Connection parameters; `privateData` must stay alive until the call returns.
rdma_conn_param ReadConnParam(const Napi::Value &v, std::vector<uint8_t> &privateData) {
  rdma_conn_param p{};
  p.responder_resources = 1;
  p.initiator_depth = 1;
  p.retry_count = 7;
  p.rnr_retry_count = 7;
  if (!v.IsObject()) return p;
  Napi::Object o = v.As<Napi::Object>();
  Napi::Value pd = o.Get("privateData");
  if (!pd.IsUndefined()) {
    if (!pd.IsBuffer()) ThrowArgument(v.Env(), "privateData", "must be a Buffer");
    auto b = pd.As<Napi::Buffer<uint8_t>>();
    if (b.Length() > 255) ThrowArgument(v.Env(), "privateData", "is limited to 255 bytes");
    privateData.assign(b.Data(), b.Data() + b.Length());
  }
  p.private_data = privateData.empty() ? nullptr : privateData.data();
  p.private_data_len = static_cast<uint8_t>(privateData.size());
  p.responder_resources = static_cast<uint8_t>(ReadU32Prop(o, "responderResources", 1, 255));
  p.initiator_depth = static_cast<uint8_t>(ReadU32Prop(o, "initiatorDepth", 1, 255));
  p.retry_count = static_cast<uint8_t>(ReadU32Prop(o, "retryCount", 7, 7));
  p.rnr_retry_count = static_cast<uint8_t>(ReadU32Prop(o, "rnrRetryCount", 7, 7));
  return p;
}

class EventChannel : public Resource<EventChannel, EventChannelHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeEventChannel", "channel", "event channel",
                                          "rdma_destroy_event_channel",
                                          "cm_ids still use this channel"};

  static Properties Methods() {
    return {
        InstanceMethod<&EventChannel::GetEvent>("getEvent"),
        InstanceAccessor<&EventChannel::Fd>("fd"),
    };
  }

  explicit EventChannel(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    auto h = std::make_shared<EventChannelHandle>();
    h->channel = rdma_create_event_channel();
    if (h->channel == nullptr) ThrowVerbs(env, "rdma_create_event_channel", "", errno != 0 ? errno : ENODEV);
    int flags = fcntl(h->channel->fd, F_GETFL);
    if (flags < 0 || fcntl(h->channel->fd, F_SETFL, flags | O_NONBLOCK) < 0)
      ThrowVerbs(env, "fcntl", "", errno);
    Attach(h);
  }

 private:
  Napi::Value Fd(const Napi::CallbackInfo &info) {
    return Napi::Number::New(info.Env(), handle_ && handle_->Live() ? handle_->channel->fd : -1);
  }

  // getEvent() -> null when nothing is pending, else the event (already acknowledged).
  Napi::Value GetEvent(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    EventChannelPtr h = Handle("rdma_get_cm_event");
    rdma_cm_event *ev = nullptr;
    if (rdma_get_cm_event(h->channel, &ev) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return env.Null();
      ThrowVerbs(env, "rdma_get_cm_event", "", errno != 0 ? errno : EIO);
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("event", static_cast<double>(ev->event));
    o.Set("status", ev->status);
    o.Set("id", U64(env, reinterpret_cast<uintptr_t>(ev->id)));
    o.Set("listenId", U64(env, reinterpret_cast<uintptr_t>(ev->listen_id)));
    const rdma_conn_param &c = ev->param.conn;
    o.Set("privateData", c.private_data != nullptr
                             ? Napi::Buffer<uint8_t>::Copy(env, static_cast<const uint8_t *>(c.private_data),
                                                           c.private_data_len)
                             : Napi::Buffer<uint8_t>::New(env, 0));
    o.Set("responderResources", c.responder_resources);
    o.Set("initiatorDepth", c.initiator_depth);
    if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
      // The kernel made a new cm_id for this request; it is ours to own from now on.
      auto idh = std::make_shared<CmIdHandle>();
      idh->id = ev->id;
      idh->channel = h;
      idh->device = DeviceOf(ev->id);
      h->children.Add(idh);
      o.Set("newId", NewCmIdObject(env, idh));
    }
    // Acknowledge at once (private data copied above): rdma_destroy_id waits for it.
    rdma_ack_cm_event(ev);
    return o;
  }

};

class DisconnectWorker : public Napi::AsyncWorker {
 public:
  DisconnectWorker(Napi::Env env, CmIdPtr id)
      : Napi::AsyncWorker(env, "rdma_interop.disconnect"), id_(std::move(id)), deferred_(env) {
    id_->disconnecting++;  // the id (and its QP) stays until the call returned
  }
  ~DisconnectWorker() override { id_->disconnecting--; }
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void Execute() override {
    if (rdma_disconnect(id_->id) != 0) err_ = errno != 0 ? errno : EIO;
  }
  void OnOK() override {
    Napi::Env env = Env();
    if (err_ == 0) {
      deferred_.Resolve(env.Undefined());
      return;
    }
    try {
      ThrowVerbs(env, "rdma_disconnect", DeviceOf(id_->id), err_);
    } catch (const Napi::Error &e) {
      deferred_.Reject(e.Value());
    }
  }

 private:
  CmIdPtr id_;
  Napi::Promise::Deferred deferred_;
  int err_ = 0;
};

class CmId : public Resource<CmId, CmIdHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeCmId", "cmId", "cm_id", "rdma_destroy_id",
                                          "the cm_id still has a QP"};

  static Properties Methods() {
    return {
        InstanceMethod<&CmId::BindAddr>("bindAddr"),
        InstanceMethod<&CmId::Listen>("listen"),
        InstanceMethod<&CmId::ResolveAddr>("resolveAddr"),
        InstanceMethod<&CmId::ResolveRoute>("resolveRoute"),
        InstanceMethod<&CmId::CreateQp>("createQp"),
        InstanceMethod<&CmId::Connect>("connect"),
        InstanceMethod<&CmId::Accept>("accept"),
        InstanceMethod<&CmId::Reject>("reject"),
        InstanceMethod<&CmId::Disconnect>("disconnect"),
        InstanceMethod<&CmId::Context>("context"),
        InstanceAccessor<&CmId::Key>("key"),
        InstanceAccessor<&CmId::LocalPort>("localPort"),
    };
  }

  // new NativeCmId(eventChannel) or new NativeCmId(External<CmIdPtr>)
  explicit CmId(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    if (!Adopted(info)) {
      EventChannelPtr ch = EventChannel::FromJs(info[0], "rdma_create_id");
      auto h = std::make_shared<CmIdHandle>();
      h->channel = ch;
      h->device = "rdma_cm";
      if (rdma_create_id(ch->channel, &h->id, nullptr, RDMA_PS_TCP) != 0) {
        h->id = nullptr;
        ThrowVerbs(env, "rdma_create_id", "", errno != 0 ? errno : ENODEV);
      }
      ch->children.Add(h);
      Attach(h);
    }
    key_ = reinterpret_cast<uintptr_t>(handle_->id);
  }

  // The device once bound (rdma_cm names none before).
  std::string Device() const { return handle_ ? DeviceOf(handle_->id) : "rdma_cm"; }
  const char *Busy(bool) const {
    return handle_->Pinned() != 0 ? "a disconnect is in progress" : nullptr;
  }

 private:
  Napi::Value Key(const Napi::CallbackInfo &info) { return U64(info.Env(), key_); }
  Napi::Value LocalPort(const Napi::CallbackInfo &info) {
    if (!handle_ || !handle_->Live()) return Napi::Number::New(info.Env(), 0);
    return Napi::Number::New(info.Env(), ntohs(rdma_get_src_port(handle_->id)));
  }

  Napi::Value BindAddr(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_bind_addr");
    std::string ip = ReadString(info[0], "address");
    uint16_t port = static_cast<uint16_t>(ReadU32(info[1], "port", 65535));
    sockaddr_storage sa{};
    if (!ParseAddress(ip, port, sa)) ThrowVerbs(env, "rdma_bind_addr", "rdma_cm", EINVAL, "bad address " + ip);
    CheckErrno(env, "rdma_bind_addr", DeviceOf(h->id), rdma_bind_addr(h->id, reinterpret_cast<sockaddr *>(&sa)));
    return env.Undefined();
  }

  Napi::Value Listen(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_listen");
    int backlog = static_cast<int>(ReadU32(info[0], "backlog", 1024));
    CheckErrno(env, "rdma_listen", DeviceOf(h->id), rdma_listen(h->id, backlog));
    return env.Undefined();
  }

  // resolveAddr(src | undefined, dst, port, timeoutMs): completes with ADDR_RESOLVED.
  Napi::Value ResolveAddr(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_resolve_addr");
    uint16_t port = static_cast<uint16_t>(ReadU32(info[2], "port", 65535));
    int timeout = static_cast<int>(ReadU32(info[3], "timeoutMs", 600000));
    sockaddr_storage src{}, dst{};
    bool haveSrc = !info[0].IsUndefined();
    if (haveSrc) {
      std::string s = ReadString(info[0], "source address");
      if (!ParseAddress(s, 0, src)) ThrowVerbs(env, "rdma_resolve_addr", "rdma_cm", EINVAL, "bad address " + s);
    }
    std::string d = ReadString(info[1], "destination address");
    if (!ParseAddress(d, port, dst)) ThrowVerbs(env, "rdma_resolve_addr", "rdma_cm", EINVAL, "bad address " + d);
    CheckErrno(env, "rdma_resolve_addr", "rdma_cm",
               rdma_resolve_addr(h->id, haveSrc ? reinterpret_cast<sockaddr *>(&src) : nullptr,
                                 reinterpret_cast<sockaddr *>(&dst), timeout));
    return env.Undefined();
  }

  Napi::Value ResolveRoute(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_resolve_route");
    int timeout = static_cast<int>(ReadU32(info[0], "timeoutMs", 600000));
    CheckErrno(env, "rdma_resolve_route", DeviceOf(h->id), rdma_resolve_route(h->id, timeout));
    return env.Undefined();
  }

  // The device context rdma_cm bound this id to (not owned: librdmacm keeps it open).
  Napi::Value Context(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_cm_id.verbs");
    if (h->id->verbs == nullptr)
      ThrowVerbs(env, "rdma_cm_id.verbs", "rdma_cm", ENODEV, "the cm_id is not bound to a device yet");
    auto ctx = std::make_shared<ContextHandle>();
    ctx->ctx = h->id->verbs;
    ctx->owned = false;
    ctx->device = DeviceOf(h->id);
    return NewContextObject(env, ctx);
  }

  // createQp(pd, sendCq, recvCq, init) -> NativeQp owned by this cm_id.
  Napi::Value CreateQp(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_create_qp");
    PdPtr pd = PdFromJs(info[0], "rdma_create_qp");
    CqPtr send = CqFromJs(info[1], "rdma_create_qp");
    CqPtr recv = CqFromJs(info[2], "rdma_create_qp");
    if (h->hasQp) ThrowVerbs(env, "rdma_create_qp", DeviceOf(h->id), EEXIST, "the cm_id already has a QP");
    if (!info[3].IsObject()) ThrowArgument(env, "init", "init attributes must be an object");
    Napi::Object init = info[3].As<Napi::Object>();
    ibv_qp_init_attr_ex a{};
    a.send_cq = send->cq;
    a.recv_cq = recv->cq;
    a.qp_type = IBV_QPT_RC;
    a.comp_mask = IBV_QP_INIT_ATTR_PD;
    a.pd = pd->pd;
    a.sq_sig_all = ReadBoolProp(init, "sqSigAll", false) ? 1 : 0;
    a.cap.max_send_wr = ReadU32Prop(init, "maxSendWr", 16);
    a.cap.max_recv_wr = ReadU32Prop(init, "maxRecvWr", 16);
    a.cap.max_send_sge = ReadU32Prop(init, "maxSendSge", 1);
    a.cap.max_recv_sge = ReadU32Prop(init, "maxRecvSge", 1);
    a.cap.max_inline_data = ReadU32Prop(init, "maxInlineData", 0);
    SrqPtr srq;
    if (Napi::Value v = init.Get("srq"); !v.IsUndefined()) {
      srq = SrqFromJs(v, "rdma_create_qp");
      a.srq = srq->srq;
      a.cap.max_recv_wr = 0;  // the SRQ holds the receives
      a.cap.max_recv_sge = 0;
    }
    // Extended (the ibv_wr_* API): rdma_create_qp_ex with the send ops, as pd.createQp does.
    uint64_t sendOps = 0;
    if (ReadBoolProp(init, "extended", false)) {
      sendOps = ReadU64Prop(init, "sendOpsFlags", 0);
      a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
      a.send_ops_flags = sendOps;
    }
    CheckErrno(env, "rdma_create_qp_ex", DeviceOf(h->id), rdma_create_qp_ex(h->id, &a));
    h->hasQp = true;
    return NewCmQpObject(env, h, pd, send, recv, sendOps, srq);
  }

  Napi::Value Connect(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_connect");
    std::vector<uint8_t> pd;
    rdma_conn_param p = ReadConnParam(info[0], pd);
    CheckErrno(env, "rdma_connect", DeviceOf(h->id), rdma_connect(h->id, &p));
    return env.Undefined();
  }

  Napi::Value Accept(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_accept");
    std::vector<uint8_t> pd;
    rdma_conn_param p = ReadConnParam(info[0], pd);
    CheckErrno(env, "rdma_accept", DeviceOf(h->id), rdma_accept(h->id, &p));
    return env.Undefined();
  }

  Napi::Value Reject(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    CmIdPtr h = Handle("rdma_reject");
    std::vector<uint8_t> pd;
    if (info[0].IsBuffer()) {
      auto b = info[0].As<Napi::Buffer<uint8_t>>();
      pd.assign(b.Data(), b.Data() + std::min<size_t>(b.Length(), 255));
    }
    CheckErrno(env, "rdma_reject", DeviceOf(h->id),
               rdma_reject(h->id, pd.empty() ? nullptr : pd.data(), static_cast<uint8_t>(pd.size())));
    return env.Undefined();
  }

  // disconnect() -> Promise<void>, run off the JS thread.
  Napi::Value Disconnect(const Napi::CallbackInfo &info) {
    CmIdPtr h = Handle("rdma_disconnect");
    auto *worker = new DisconnectWorker(info.Env(), h);
    Napi::Promise p = worker->Promise();
    worker->Queue();
    return p;
  }

  uint64_t key_ = 0;
};

}  // namespace

CmIdPtr CmIdFromJs(const Napi::Value &v, const char *call) { return CmId::FromJs(v, call); }

Napi::Object NewCmIdObject(Napi::Env env, const CmIdPtr &id) { return CmId::Adopt(env, id); }

}  // namespace rdma_interop
