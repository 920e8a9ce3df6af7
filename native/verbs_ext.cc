// Verbs added for issue 34 that need no class of their own: UD multicast attach and detach
// (ibv_attach_mcast / ibv_detach_mcast on a NativeQp), the on-demand paging capabilities
// of ibv_query_device_ex (odp_caps), and the libibverbs constants their TS tables name
// (`extConstants`, checked by test/host/verbs/ext-constants.test.ts against the headers).
#include <algorithm>

#include "qp_handle.h"

namespace rdma_interop {

namespace {

// attachMcast(qp, gid: Buffer(16), lid) / detachMcast(...): the raw GID bytes, as the
// wire and ibv_gid carry them.
union ibv_gid ReadGid(const Napi::Value &v) {
  if (!v.IsBuffer() || v.As<Napi::Buffer<uint8_t>>().Length() != 16)
    ThrowArgument(v.Env(), "gid", "must be a 16-byte Buffer");
  union ibv_gid gid;
  std::memcpy(gid.raw, v.As<Napi::Buffer<uint8_t>>().Data(), 16);
  return gid;
}

Napi::Value Mcast(const Napi::CallbackInfo &info, bool attach) {
  Napi::Env env = info.Env();
  const char *call = attach ? "ibv_attach_mcast" : "ibv_detach_mcast";
  QpRef qp = QpRefFromJs(info[0], call);
  union ibv_gid gid = ReadGid(info[1]);
  uint16_t lid = static_cast<uint16_t>(ReadU32(info[2], "lid", 0xffff));
  int ret = attach ? ibv_attach_mcast(qp.qp, &gid, lid) : ibv_detach_mcast(qp.qp, &gid, lid);
  // libibverbs returns the positive errno of ibv_cmd_attach_mcast (a write() on the
  // uverbs fd): both conventions are accepted, as everywhere.
  CheckIbv(env, call, qp.device, ret);
  // Remembered for the QP's destruction (qp_handle.h); a second attach of a group is no
  // error to the kernel (ib_uverbs_attach_mcast finds it listed) and is listed once.
  auto &groups = static_cast<QpHandle &>(*qp.owner).mcast;
  auto same = [&](const std::pair<ibv_gid, uint16_t> &g) {
    return g.second == lid && std::memcmp(g.first.raw, gid.raw, 16) == 0;
  };
  auto it = std::find_if(groups.begin(), groups.end(), same);
  if (attach && it == groups.end()) groups.emplace_back(gid, lid);
  if (!attach && it != groups.end()) groups.erase(it);
  return env.Undefined();
}

Napi::Value AttachMcast(const Napi::CallbackInfo &info) { return Mcast(info, true); }
Napi::Value DetachMcast(const Napi::CallbackInfo &info) { return Mcast(info, false); }

// queryOdpCaps(context) -> { generalCaps, rc, uc, ud } or undefined when the
// provider has no ibv_query_device_ex.
Napi::Value QueryOdpCaps(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  ContextPtr ctx = ContextFromJs(info[0], "ibv_query_device_ex");
  ibv_device_attr_ex ex{};
  int ret = ibv_query_device_ex(ctx->ctx, nullptr, &ex);
  if (ret == EOPNOTSUPP || ret == ENOSYS) return env.Undefined();
  CheckIbv(env, "ibv_query_device_ex", ctx->device, ret);
  Napi::Object o = Napi::Object::New(env);
  o.Set("generalCaps", U64(env, ex.odp_caps.general_caps));
  o.Set("rc", Napi::Number::New(env, ex.odp_caps.per_transport_caps.rc_odp_caps));
  o.Set("uc", Napi::Number::New(env, ex.odp_caps.per_transport_caps.uc_odp_caps));
  o.Set("ud", Napi::Number::New(env, ex.odp_caps.per_transport_caps.ud_odp_caps));
  return o;
}

#define RI_CONST(name) group.Set(#name, Napi::Number::New(env, static_cast<double>(name)))

Napi::Object ExtConstants(Napi::Env env) {
  Napi::Object all = Napi::Object::New(env);
  Napi::Object group = Napi::Object::New(env);
  RI_CONST(IBV_REREG_MR_CHANGE_TRANSLATION);
  RI_CONST(IBV_REREG_MR_CHANGE_PD);
  RI_CONST(IBV_REREG_MR_CHANGE_ACCESS);
  all.Set("REREG_MR_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_REREG_MR_ERR_INPUT);
  RI_CONST(IBV_REREG_MR_ERR_DONT_FORK_NEW);
  RI_CONST(IBV_REREG_MR_ERR_DO_FORK_OLD);
  RI_CONST(IBV_REREG_MR_ERR_CMD);
  RI_CONST(IBV_REREG_MR_ERR_CMD_AND_DO_FORK_NEW);
  all.Set("REREG_MR_ERR", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_WC_EX_WITH_BYTE_LEN);
  RI_CONST(IBV_WC_EX_WITH_IMM);
  RI_CONST(IBV_WC_EX_WITH_QP_NUM);
  RI_CONST(IBV_WC_EX_WITH_SRC_QP);
  RI_CONST(IBV_WC_EX_WITH_SLID);
  RI_CONST(IBV_WC_EX_WITH_SL);
  RI_CONST(IBV_WC_EX_WITH_DLID_PATH_BITS);
  RI_CONST(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
  RI_CONST(IBV_WC_EX_WITH_CVLAN);
  RI_CONST(IBV_WC_EX_WITH_FLOW_TAG);
  RI_CONST(IBV_WC_EX_WITH_TM_INFO);
  RI_CONST(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
  all.Set("CREATE_CQ_WC_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_ODP_SUPPORT);
  RI_CONST(IBV_ODP_SUPPORT_IMPLICIT);
  all.Set("ODP_GENERAL_CAPS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_ODP_SUPPORT_SEND);
  RI_CONST(IBV_ODP_SUPPORT_RECV);
  RI_CONST(IBV_ODP_SUPPORT_WRITE);
  RI_CONST(IBV_ODP_SUPPORT_READ);
  RI_CONST(IBV_ODP_SUPPORT_ATOMIC);
  RI_CONST(IBV_ODP_SUPPORT_SRQ_RECV);
  all.Set("ODP_TRANSPORT_CAPS", group);
  return all;
}

#undef RI_CONST

void Register(Napi::Env env, Napi::Object exports) {
  exports.Set("attachMcast", Napi::Function::New(env, AttachMcast, "attachMcast"));
  exports.Set("detachMcast", Napi::Function::New(env, DetachMcast, "detachMcast"));
  exports.Set("queryOdpCaps", Napi::Function::New(env, QueryOdpCaps, "queryOdpCaps"));
  exports.Set("extConstants", ExtConstants(env));
}

[[maybe_unused]] const bool kRegistered = (Registrars().push_back(&Register), true);

}  // namespace

}  // namespace rdma_interop
