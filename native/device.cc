// Devices: listing, and the Context class (an opened ibv_context) with device, port
// and GID-table queries. Numbers come back raw; src/ibverbs/constants.ts names them.
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>

#include <vector>

#include "resource.h"

namespace rdma_interop {

namespace {

Napi::Object DescribeDevice(Napi::Env env, ibv_device *dev) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", ibv_get_device_name(dev));
  // ibv_get_device_guid returns the GUID in network order; as a number it is read
  // big-endian so that it prints the way ibv_devinfo prints it.
  o.Set("nodeGuid", U64(env, be64toh(ibv_get_device_guid(dev))));
  o.Set("transportType", static_cast<double>(dev->transport_type));
  o.Set("nodeType", static_cast<double>(dev->node_type));
  return o;
}

Napi::Value ListDevices(const Napi::CallbackInfo &info) {
  Napi::Env env = info.Env();
  int count = 0;
  ibv_device **list = ibv_get_device_list(&count);
  Napi::Array out = Napi::Array::New(env);
  if (list == nullptr) {
    // No RDMA subsystem at all (ENOSYS) or no devices: an empty list, not an error.
    if (errno == ENOSYS || errno == ENODEV || errno == ENOENT || errno == 0) return out;
    ThrowVerbs(env, "ibv_get_device_list", "", errno);
  }
  for (int i = 0; i < count; i++) out.Set(static_cast<uint32_t>(i), DescribeDevice(env, list[i]));
  ibv_free_device_list(list);
  return out;
}

class Context : public Resource<Context, ContextHandle> {
 public:
  static constexpr ResourceTraits kTraits{"NativeContext", "context", "context", "ibv_close_device",
                                          "the context still has live children"};

  static Properties Methods() {
    return {
        InstanceMethod<&Context::QueryDevice>("queryDevice"),
        InstanceMethod<&Context::QueryPort>("queryPort"),
        InstanceMethod<&Context::QueryGidTable>("queryGidTable"),
        InstanceMethod<&Context::GetAsyncEvent>("getAsyncEvent"),
        InstanceAccessor<&Context::AsyncFd>("asyncFd"),
        InstanceAccessor<&Context::Name>("name"),
        InstanceAccessor<&Context::Owned>("owned"),
    };
  }

  // new NativeContext(deviceName) opens the device; new NativeContext(External) adopts.
  explicit Context(const Napi::CallbackInfo &info) : Resource(info) {
    Napi::Env env = info.Env();
    if (Adopted(info)) return;
    if (!info[0].IsString()) ThrowArgument(env, "name", "device name must be a string");
    std::string wanted = info[0].As<Napi::String>();
    int count = 0;
    ibv_device **list = ibv_get_device_list(&count);
    if (list == nullptr) ThrowVerbs(env, "ibv_get_device_list", wanted, errno != 0 ? errno : ENODEV);
    ibv_device *found = nullptr;
    for (int i = 0; i < count; i++)
      if (wanted == ibv_get_device_name(list[i])) found = list[i];
    if (found == nullptr) {
      ibv_free_device_list(list);
      ThrowVerbs(env, "ibv_open_device", wanted, ENODEV, "no such device");
    }
    ibv_context *ctx = ibv_open_device(found);
    int err = errno;
    ibv_free_device_list(list);
    if (ctx == nullptr) ThrowVerbs(env, "ibv_open_device", wanted, err != 0 ? err : ENODEV);
    auto h = std::make_shared<ContextHandle>();
    h->ctx = ctx;
    h->device = wanted;
    Attach(h);
  }

 private:
  // The async event fd, made non-blocking once so that getAsyncEvent never stalls the
  // JS thread (watched on the libuv loop by the TS layer).
  Napi::Value AsyncFd(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ContextPtr h = Handle("ibv_get_async_event");
    if (!asyncNonBlocking_) {
      int flags = fcntl(h->ctx->async_fd, F_GETFL);
      if (flags < 0 || fcntl(h->ctx->async_fd, F_SETFL, flags | O_NONBLOCK) < 0)
        ThrowVerbs(env, "fcntl", h->device, errno);
      asyncNonBlocking_ = true;
    }
    return Napi::Number::New(env, h->ctx->async_fd);
  }

  // getAsyncEvent() -> { eventType, cqKey | qpNum | srqKey | wqKey | portNum } or null:
  // one ibv_get_async_event (non-blocking), acknowledged at once (ibv_destroy_cq/qp
  // wait for the acknowledgement of every event they reported).
  Napi::Value GetAsyncEvent(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ContextPtr h = Handle("ibv_get_async_event");
    if (!asyncNonBlocking_) AsyncFd(info);
    ibv_async_event ev{};
    if (ibv_get_async_event(h->ctx, &ev) != 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return env.Null();
      ThrowVerbs(env, "ibv_get_async_event", h->device, errno != 0 ? errno : EIO);
    }
    Napi::Object o = Napi::Object::New(env);
    o.Set("eventType", static_cast<double>(ev.event_type));
    switch (ev.event_type) {
      case IBV_EVENT_CQ_ERR:
        o.Set("cqKey", U64(env, reinterpret_cast<uintptr_t>(ev.element.cq)));
        break;
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_COMM_EST:
      case IBV_EVENT_SQ_DRAINED:
      case IBV_EVENT_PATH_MIG:
      case IBV_EVENT_PATH_MIG_ERR:
      case IBV_EVENT_QP_LAST_WQE_REACHED:
        o.Set("qpNum", ev.element.qp->qp_num);
        break;
      case IBV_EVENT_SRQ_ERR:
      case IBV_EVENT_SRQ_LIMIT_REACHED:
        o.Set("srqKey", U64(env, reinterpret_cast<uintptr_t>(ev.element.srq)));
        break;
      case IBV_EVENT_WQ_FATAL:
        o.Set("wqKey", U64(env, reinterpret_cast<uintptr_t>(ev.element.wq)));
        break;
      case IBV_EVENT_DEVICE_FATAL:
        break;
      default:  // the port events
        o.Set("portNum", ev.element.port_num);
        break;
    }
    ibv_ack_async_event(&ev);
    return o;
  }

  Napi::Value Name(const Napi::CallbackInfo &info) {
    return Napi::String::New(info.Env(), device_);
  }
  Napi::Value Owned(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), handle_ ? handle_->owned : true);
  }

  Napi::Value QueryDevice(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ContextPtr h = Handle("ibv_query_device");
    ibv_device_attr_ex ex{};
    bool haveEx = ibv_query_device_ex(h->ctx, nullptr, &ex) == 0;
    if (!haveEx) CheckIbv(env, "ibv_query_device", h->device, ibv_query_device(h->ctx, &ex.orig_attr));
    const ibv_device_attr &a = ex.orig_attr;
    Napi::Object o = Napi::Object::New(env);
    o.Set("fwVer", a.fw_ver);
    o.Set("nodeGuid", U64(env, be64toh(a.node_guid)));
    o.Set("sysImageGuid", U64(env, be64toh(a.sys_image_guid)));
    o.Set("maxMrSize", U64(env, a.max_mr_size));
    o.Set("pageSizeCap", U64(env, a.page_size_cap));
    o.Set("vendorId", a.vendor_id);
    o.Set("vendorPartId", a.vendor_part_id);
    o.Set("hwVer", a.hw_ver);
    o.Set("maxQp", a.max_qp);
    o.Set("maxQpWr", a.max_qp_wr);
    o.Set("deviceCapFlags", a.device_cap_flags);
    o.Set("maxSge", a.max_sge);
    o.Set("maxSgeRd", a.max_sge_rd);
    o.Set("maxCq", a.max_cq);
    o.Set("maxCqe", a.max_cqe);
    o.Set("maxMr", a.max_mr);
    o.Set("maxPd", a.max_pd);
    o.Set("maxQpRdAtom", a.max_qp_rd_atom);
    o.Set("maxEeRdAtom", a.max_ee_rd_atom);
    o.Set("maxResRdAtom", a.max_res_rd_atom);
    o.Set("maxQpInitRdAtom", a.max_qp_init_rd_atom);
    o.Set("maxEeInitRdAtom", a.max_ee_init_rd_atom);
    o.Set("atomicCap", static_cast<double>(a.atomic_cap));
    o.Set("maxEe", a.max_ee);
    o.Set("maxRdd", a.max_rdd);
    o.Set("maxMw", a.max_mw);
    o.Set("maxRawIpv6Qp", a.max_raw_ipv6_qp);
    o.Set("maxRawEthyQp", a.max_raw_ethy_qp);
    o.Set("maxMcastGrp", a.max_mcast_grp);
    o.Set("maxMcastQpAttach", a.max_mcast_qp_attach);
    o.Set("maxTotalMcastQpAttach", a.max_total_mcast_qp_attach);
    o.Set("maxAh", a.max_ah);
    o.Set("maxFmr", a.max_fmr);
    o.Set("maxMapPerFmr", a.max_map_per_fmr);
    o.Set("maxSrq", a.max_srq);
    o.Set("maxSrqWr", a.max_srq_wr);
    o.Set("maxSrqSge", a.max_srq_sge);
    o.Set("maxPkeys", a.max_pkeys);
    o.Set("localCaAckDelay", a.local_ca_ack_delay);
    o.Set("physPortCnt", a.phys_port_cnt);
    if (haveEx) {
      Napi::Object e = Napi::Object::New(env);
      e.Set("deviceCapFlagsEx", U64(env, ex.device_cap_flags_ex));
      e.Set("completionTimestampMask", U64(env, ex.completion_timestamp_mask));
      e.Set("hcaCoreClock", U64(env, ex.hca_core_clock));
      e.Set("odpGeneralCaps", U64(env, ex.odp_caps.general_caps));
      e.Set("maxDmSize", U64(env, ex.max_dm_size));
      e.Set("pciAtomicFetchAdd", ex.pci_atomic_caps.fetch_add);
      e.Set("pciAtomicSwap", ex.pci_atomic_caps.swap);
      e.Set("pciAtomicCompareSwap", ex.pci_atomic_caps.compare_swap);
      o.Set("ex", e);
    }
    return o;
  }

  Napi::Value QueryPort(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ContextPtr h = Handle("ibv_query_port");
    uint32_t port = ReadU32(info[0], "port", 255);
    ibv_port_attr p{};
    CheckIbv(env, "ibv_query_port", h->device, ibv_query_port(h->ctx, static_cast<uint8_t>(port), &p));
    Napi::Object o = Napi::Object::New(env);
    o.Set("state", static_cast<double>(p.state));
    o.Set("maxMtu", static_cast<double>(p.max_mtu));
    o.Set("activeMtu", static_cast<double>(p.active_mtu));
    o.Set("gidTblLen", p.gid_tbl_len);
    o.Set("portCapFlags", p.port_cap_flags);
    o.Set("maxMsgSz", p.max_msg_sz);
    o.Set("pkeyTblLen", p.pkey_tbl_len);
    o.Set("lid", p.lid);
    o.Set("smLid", p.sm_lid);
    o.Set("lmc", p.lmc);
    o.Set("maxVlNum", p.max_vl_num);
    o.Set("activeWidth", p.active_width);
    o.Set("activeSpeed", p.active_speed);
    o.Set("physState", p.phys_state);
    o.Set("linkLayer", p.link_layer);
    return o;
  }

  // Every valid GID of a port with its type (IB / RoCE v1 / RoCE v2) and netdev.
  Napi::Value QueryGidTable(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ContextPtr h = Handle("ibv_query_gid_ex");
    uint32_t port = ReadU32(info[0], "port", 255);
    ibv_port_attr p{};
    CheckIbv(env, "ibv_query_port", h->device, ibv_query_port(h->ctx, static_cast<uint8_t>(port), &p));
    Napi::Array out = Napi::Array::New(env);
    uint32_t n = 0;
    for (int i = 0; i < p.gid_tbl_len; i++) {
      ibv_gid_entry e{};
      int ret = ibv_query_gid_ex(h->ctx, port, static_cast<uint32_t>(i), &e, 0);
      if (ret == ENODATA || ret == -ENODATA) continue;  // an empty slot
      if (ret != 0) {
        // Providers without GID types (pure IB, old kernels): fall back to the raw GID.
        ibv_gid g{};
        if (ibv_query_gid(h->ctx, static_cast<uint8_t>(port), i, &g) != 0) continue;
        bool zero = true;
        for (uint8_t b : g.raw) zero = zero && b == 0;
        if (zero) continue;
        std::memcpy(e.gid.raw, g.raw, 16);
        e.gid_index = static_cast<uint32_t>(i);
        e.gid_type = IBV_GID_TYPE_IB;
        e.ndev_ifindex = 0;
      }
      Napi::Object o = Napi::Object::New(env);
      o.Set("index", e.gid_index);
      o.Set("gid", Napi::Buffer<uint8_t>::Copy(env, e.gid.raw, 16));
      o.Set("gidType", e.gid_type);
      o.Set("ifindex", e.ndev_ifindex);
      out.Set(n++, o);
    }
    return out;
  }

  bool asyncNonBlocking_ = false;
};

}  // namespace

ContextPtr ContextFromJs(const Napi::Value &v, const char *call) { return Context::FromJs(v, call); }

Napi::Object NewContextObject(Napi::Env env, const ContextPtr &ctx) { return Context::Adopt(env, ctx); }

void RegisterDevice(Napi::Env env, Napi::Object exports) {
  exports.Set("listDevices", Napi::Function::New(env, ListDevices));
}

}  // namespace rdma_interop
