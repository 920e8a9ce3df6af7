// The libibverbs / librdmacm constants the TypeScript tables name, read from
// <infiniband/verbs.h> and <rdma/rdma_cma.h> at compile time, and the completion layout
// NativeCq.poll writes. Exported as `constants` (C name -> value, grouped by the TS
// table that names them), `wcLayout` and `sendLayout` (what NativeQp.postPacked reads);
// test/host/verbs/constants.test.ts checks every TS table against them, so a wrong hand-copied value fails a test instead of a run.
// (Names newer than the oldest supported rdma-core, e.g. the FLUSH ones, are absent and
// listed by that test.)
#include "common.h"

namespace rdma_interop {

namespace {

#define RI_CONST(name) group.Set(#name, Napi::Number::New(env, static_cast<double>(name)))

Napi::Object Constants(Napi::Env env) {
  Napi::Object all = Napi::Object::New(env);
  Napi::Object group;
  group = Napi::Object::New(env);
  RI_CONST(IBV_WR_RDMA_WRITE);
  RI_CONST(IBV_WR_RDMA_WRITE_WITH_IMM);
  RI_CONST(IBV_WR_SEND);
  RI_CONST(IBV_WR_SEND_WITH_IMM);
  RI_CONST(IBV_WR_RDMA_READ);
  RI_CONST(IBV_WR_ATOMIC_CMP_AND_SWP);
  RI_CONST(IBV_WR_ATOMIC_FETCH_AND_ADD);
  RI_CONST(IBV_WR_LOCAL_INV);
  RI_CONST(IBV_WR_BIND_MW);
  RI_CONST(IBV_WR_SEND_WITH_INV);
  RI_CONST(IBV_WR_TSO);
  RI_CONST(IBV_WR_DRIVER1);
  RI_CONST(IBV_WR_ATOMIC_WRITE);
  all.Set("WR_OPCODE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_WC_SEND);
  RI_CONST(IBV_WC_RDMA_WRITE);
  RI_CONST(IBV_WC_RDMA_READ);
  RI_CONST(IBV_WC_COMP_SWAP);
  RI_CONST(IBV_WC_FETCH_ADD);
  RI_CONST(IBV_WC_BIND_MW);
  RI_CONST(IBV_WC_LOCAL_INV);
  RI_CONST(IBV_WC_TSO);
  RI_CONST(IBV_WC_ATOMIC_WRITE);
  RI_CONST(IBV_WC_RECV);
  RI_CONST(IBV_WC_RECV_RDMA_WITH_IMM);
  RI_CONST(IBV_WC_TM_ADD);
  RI_CONST(IBV_WC_TM_DEL);
  RI_CONST(IBV_WC_TM_SYNC);
  RI_CONST(IBV_WC_TM_RECV);
  RI_CONST(IBV_WC_TM_NO_TAG);
  RI_CONST(IBV_WC_DRIVER1);
  RI_CONST(IBV_WC_DRIVER2);
  RI_CONST(IBV_WC_DRIVER3);
  all.Set("WC_OPCODE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_WC_GRH);
  RI_CONST(IBV_WC_WITH_IMM);
  RI_CONST(IBV_WC_IP_CSUM_OK);
  RI_CONST(IBV_WC_WITH_INV);
  all.Set("WC_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_WC_SUCCESS);
  RI_CONST(IBV_WC_LOC_LEN_ERR);
  RI_CONST(IBV_WC_LOC_QP_OP_ERR);
  RI_CONST(IBV_WC_LOC_EEC_OP_ERR);
  RI_CONST(IBV_WC_LOC_PROT_ERR);
  RI_CONST(IBV_WC_WR_FLUSH_ERR);
  RI_CONST(IBV_WC_MW_BIND_ERR);
  RI_CONST(IBV_WC_BAD_RESP_ERR);
  RI_CONST(IBV_WC_LOC_ACCESS_ERR);
  RI_CONST(IBV_WC_REM_INV_REQ_ERR);
  RI_CONST(IBV_WC_REM_ACCESS_ERR);
  RI_CONST(IBV_WC_REM_OP_ERR);
  RI_CONST(IBV_WC_RETRY_EXC_ERR);
  RI_CONST(IBV_WC_RNR_RETRY_EXC_ERR);
  RI_CONST(IBV_WC_LOC_RDD_VIOL_ERR);
  RI_CONST(IBV_WC_REM_INV_RD_REQ_ERR);
  RI_CONST(IBV_WC_REM_ABORT_ERR);
  RI_CONST(IBV_WC_INV_EECN_ERR);
  RI_CONST(IBV_WC_INV_EEC_STATE_ERR);
  RI_CONST(IBV_WC_FATAL_ERR);
  RI_CONST(IBV_WC_RESP_TIMEOUT_ERR);
  RI_CONST(IBV_WC_GENERAL_ERR);
  RI_CONST(IBV_WC_TM_ERR);
  RI_CONST(IBV_WC_TM_RNDV_INCOMPLETE);
  all.Set("WC_STATUS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_ACCESS_LOCAL_WRITE);
  RI_CONST(IBV_ACCESS_REMOTE_WRITE);
  RI_CONST(IBV_ACCESS_REMOTE_READ);
  RI_CONST(IBV_ACCESS_REMOTE_ATOMIC);
  RI_CONST(IBV_ACCESS_MW_BIND);
  RI_CONST(IBV_ACCESS_ZERO_BASED);
  RI_CONST(IBV_ACCESS_ON_DEMAND);
  RI_CONST(IBV_ACCESS_HUGETLB);
  RI_CONST(IBV_ACCESS_RELAXED_ORDERING);
  all.Set("ACCESS_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_QPS_RESET);
  RI_CONST(IBV_QPS_INIT);
  RI_CONST(IBV_QPS_RTR);
  RI_CONST(IBV_QPS_RTS);
  RI_CONST(IBV_QPS_SQD);
  RI_CONST(IBV_QPS_SQE);
  RI_CONST(IBV_QPS_ERR);
  RI_CONST(IBV_QPS_UNKNOWN);
  all.Set("QP_STATE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_QP_STATE);
  RI_CONST(IBV_QP_CUR_STATE);
  RI_CONST(IBV_QP_EN_SQD_ASYNC_NOTIFY);
  RI_CONST(IBV_QP_ACCESS_FLAGS);
  RI_CONST(IBV_QP_PKEY_INDEX);
  RI_CONST(IBV_QP_PORT);
  RI_CONST(IBV_QP_QKEY);
  RI_CONST(IBV_QP_AV);
  RI_CONST(IBV_QP_PATH_MTU);
  RI_CONST(IBV_QP_TIMEOUT);
  RI_CONST(IBV_QP_RETRY_CNT);
  RI_CONST(IBV_QP_RNR_RETRY);
  RI_CONST(IBV_QP_RQ_PSN);
  RI_CONST(IBV_QP_MAX_QP_RD_ATOMIC);
  RI_CONST(IBV_QP_ALT_PATH);
  RI_CONST(IBV_QP_MIN_RNR_TIMER);
  RI_CONST(IBV_QP_SQ_PSN);
  RI_CONST(IBV_QP_MAX_DEST_RD_ATOMIC);
  RI_CONST(IBV_QP_PATH_MIG_STATE);
  RI_CONST(IBV_QP_CAP);
  RI_CONST(IBV_QP_DEST_QPN);
  all.Set("QP_ATTR_MASK", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_SEND_FENCE);
  RI_CONST(IBV_SEND_SIGNALED);
  RI_CONST(IBV_SEND_SOLICITED);
  RI_CONST(IBV_SEND_INLINE);
  RI_CONST(IBV_SEND_IP_CSUM);
  all.Set("SEND_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_QP_EX_WITH_RDMA_WRITE);
  RI_CONST(IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM);
  RI_CONST(IBV_QP_EX_WITH_SEND);
  RI_CONST(IBV_QP_EX_WITH_SEND_WITH_IMM);
  RI_CONST(IBV_QP_EX_WITH_RDMA_READ);
  RI_CONST(IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP);
  RI_CONST(IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD);
  RI_CONST(IBV_QP_EX_WITH_LOCAL_INV);
  RI_CONST(IBV_QP_EX_WITH_BIND_MW);
  RI_CONST(IBV_QP_EX_WITH_SEND_WITH_INV);
  RI_CONST(IBV_QP_EX_WITH_ATOMIC_WRITE);
  all.Set("SEND_OPS_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_SRQ_MAX_WR);
  RI_CONST(IBV_SRQ_LIMIT);
  all.Set("SRQ_ATTR_MASK", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_MW_TYPE_1);
  RI_CONST(IBV_MW_TYPE_2);
  all.Set("MW_TYPE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_TRANSPORT_UNKNOWN);
  RI_CONST(IBV_TRANSPORT_IB);
  RI_CONST(IBV_TRANSPORT_IWARP);
  RI_CONST(IBV_TRANSPORT_USNIC);
  RI_CONST(IBV_TRANSPORT_USNIC_UDP);
  RI_CONST(IBV_TRANSPORT_UNSPECIFIED);
  all.Set("TRANSPORT_TYPE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_NODE_UNKNOWN);
  RI_CONST(IBV_NODE_CA);
  RI_CONST(IBV_NODE_SWITCH);
  RI_CONST(IBV_NODE_ROUTER);
  RI_CONST(IBV_NODE_RNIC);
  RI_CONST(IBV_NODE_USNIC);
  RI_CONST(IBV_NODE_USNIC_UDP);
  RI_CONST(IBV_NODE_UNSPECIFIED);
  all.Set("NODE_TYPE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_ATOMIC_NONE);
  RI_CONST(IBV_ATOMIC_HCA);
  RI_CONST(IBV_ATOMIC_GLOB);
  all.Set("ATOMIC_CAP", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_MTU_256);
  RI_CONST(IBV_MTU_512);
  RI_CONST(IBV_MTU_1024);
  RI_CONST(IBV_MTU_2048);
  RI_CONST(IBV_MTU_4096);
  all.Set("MTU", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_PORT_NOP);
  RI_CONST(IBV_PORT_DOWN);
  RI_CONST(IBV_PORT_INIT);
  RI_CONST(IBV_PORT_ARMED);
  RI_CONST(IBV_PORT_ACTIVE);
  RI_CONST(IBV_PORT_ACTIVE_DEFER);
  all.Set("PORT_STATE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_LINK_LAYER_UNSPECIFIED);
  RI_CONST(IBV_LINK_LAYER_INFINIBAND);
  RI_CONST(IBV_LINK_LAYER_ETHERNET);
  all.Set("LINK_LAYER", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_GID_TYPE_IB);
  RI_CONST(IBV_GID_TYPE_ROCE_V1);
  RI_CONST(IBV_GID_TYPE_ROCE_V2);
  all.Set("GID_TYPE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_QPT_RC);
  RI_CONST(IBV_QPT_UC);
  RI_CONST(IBV_QPT_UD);
  all.Set("QP_TYPE", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_DEVICE_RESIZE_MAX_WR);
  RI_CONST(IBV_DEVICE_BAD_PKEY_CNTR);
  RI_CONST(IBV_DEVICE_BAD_QKEY_CNTR);
  RI_CONST(IBV_DEVICE_RAW_MULTI);
  RI_CONST(IBV_DEVICE_AUTO_PATH_MIG);
  RI_CONST(IBV_DEVICE_CHANGE_PHY_PORT);
  RI_CONST(IBV_DEVICE_UD_AV_PORT_ENFORCE);
  RI_CONST(IBV_DEVICE_CURR_QP_STATE_MOD);
  RI_CONST(IBV_DEVICE_SHUTDOWN_PORT);
  RI_CONST(IBV_DEVICE_INIT_TYPE);
  RI_CONST(IBV_DEVICE_PORT_ACTIVE_EVENT);
  RI_CONST(IBV_DEVICE_SYS_IMAGE_GUID);
  RI_CONST(IBV_DEVICE_RC_RNR_NAK_GEN);
  RI_CONST(IBV_DEVICE_SRQ_RESIZE);
  RI_CONST(IBV_DEVICE_N_NOTIFY_CQ);
  RI_CONST(IBV_DEVICE_MEM_WINDOW);
  RI_CONST(IBV_DEVICE_UD_IP_CSUM);
  RI_CONST(IBV_DEVICE_XRC);
  RI_CONST(IBV_DEVICE_MEM_MGT_EXTENSIONS);
  RI_CONST(IBV_DEVICE_MEM_WINDOW_TYPE_2A);
  RI_CONST(IBV_DEVICE_MEM_WINDOW_TYPE_2B);
  RI_CONST(IBV_DEVICE_RC_IP_CSUM);
  RI_CONST(IBV_DEVICE_RAW_IP_CSUM);
  RI_CONST(IBV_DEVICE_MANAGED_FLOW_STEERING);
  all.Set("DEVICE_CAP_FLAGS", group);
  group = Napi::Object::New(env);
  RI_CONST(IBV_EVENT_CQ_ERR);
  RI_CONST(IBV_EVENT_QP_FATAL);
  RI_CONST(IBV_EVENT_QP_REQ_ERR);
  RI_CONST(IBV_EVENT_QP_ACCESS_ERR);
  RI_CONST(IBV_EVENT_COMM_EST);
  RI_CONST(IBV_EVENT_SQ_DRAINED);
  RI_CONST(IBV_EVENT_PATH_MIG);
  RI_CONST(IBV_EVENT_PATH_MIG_ERR);
  RI_CONST(IBV_EVENT_DEVICE_FATAL);
  RI_CONST(IBV_EVENT_PORT_ACTIVE);
  RI_CONST(IBV_EVENT_PORT_ERR);
  RI_CONST(IBV_EVENT_LID_CHANGE);
  RI_CONST(IBV_EVENT_PKEY_CHANGE);
  RI_CONST(IBV_EVENT_SM_CHANGE);
  RI_CONST(IBV_EVENT_SRQ_ERR);
  RI_CONST(IBV_EVENT_SRQ_LIMIT_REACHED);
  RI_CONST(IBV_EVENT_QP_LAST_WQE_REACHED);
  RI_CONST(IBV_EVENT_CLIENT_REREGISTER);
  RI_CONST(IBV_EVENT_GID_CHANGE);
  RI_CONST(IBV_EVENT_WQ_FATAL);
  all.Set("ASYNC_EVENT", group);
  group = Napi::Object::New(env);
  RI_CONST(RDMA_CM_EVENT_ADDR_RESOLVED);
  RI_CONST(RDMA_CM_EVENT_ADDR_ERROR);
  RI_CONST(RDMA_CM_EVENT_ROUTE_RESOLVED);
  RI_CONST(RDMA_CM_EVENT_ROUTE_ERROR);
  RI_CONST(RDMA_CM_EVENT_CONNECT_REQUEST);
  RI_CONST(RDMA_CM_EVENT_CONNECT_RESPONSE);
  RI_CONST(RDMA_CM_EVENT_CONNECT_ERROR);
  RI_CONST(RDMA_CM_EVENT_UNREACHABLE);
  RI_CONST(RDMA_CM_EVENT_REJECTED);
  RI_CONST(RDMA_CM_EVENT_ESTABLISHED);
  RI_CONST(RDMA_CM_EVENT_DISCONNECTED);
  RI_CONST(RDMA_CM_EVENT_DEVICE_REMOVAL);
  RI_CONST(RDMA_CM_EVENT_MULTICAST_JOIN);
  RI_CONST(RDMA_CM_EVENT_MULTICAST_ERROR);
  RI_CONST(RDMA_CM_EVENT_ADDR_CHANGE);
  RI_CONST(RDMA_CM_EVENT_TIMEWAIT_EXIT);
  all.Set("CM_EVENT", group);
  return all;
}

#undef RI_CONST

Napi::Object WcLayout(Napi::Env env) {
  using namespace wc_word;
  Napi::Object o = Napi::Object::New(env);
  o.Set("wrIdLow", static_cast<double>(kWrIdLow));
  o.Set("wrIdHigh", static_cast<double>(kWrIdHigh));
  o.Set("status", static_cast<double>(kStatus));
  o.Set("opcode", static_cast<double>(kOpcode));
  o.Set("vendorErr", static_cast<double>(kVendorErr));
  o.Set("byteLen", static_cast<double>(kByteLen));
  o.Set("immDataRaw", static_cast<double>(kImmDataRaw));
  o.Set("qpNum", static_cast<double>(kQpNum));
  o.Set("srcQp", static_cast<double>(kSrcQp));
  o.Set("wcFlags", static_cast<double>(kWcFlags));
  o.Set("pkeyIndex", static_cast<double>(kPkeyIndex));
  o.Set("slid", static_cast<double>(kSlid));
  o.Set("sl", static_cast<double>(kSl));
  o.Set("dlidPathBits", static_cast<double>(kDlidPathBits));
  o.Set("words", static_cast<double>(kCount));
  return o;
}

Napi::Object SendLayout(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("wrId", static_cast<double>(send_word::kWrId));
  o.Set("remoteAddr", static_cast<double>(send_word::kRemoteAddr));
  o.Set("compareAdd", static_cast<double>(send_word::kCompareAdd));
  o.Set("swap", static_cast<double>(send_word::kSwap));
  o.Set("atomicValue", static_cast<double>(send_word::kAtomicValue));
  o.Set("flushLength", static_cast<double>(send_word::kFlushLength));
  o.Set("opcode", static_cast<double>(send_word::kOpcode));
  o.Set("sendFlags", static_cast<double>(send_word::kSendFlags));
  o.Set("numSge", static_cast<double>(send_word::kNumSge));
  o.Set("immData", static_cast<double>(send_word::kImmData));
  o.Set("rkey", static_cast<double>(send_word::kRkey));
  o.Set("flushType", static_cast<double>(send_word::kFlushType));
  o.Set("flushLevel", static_cast<double>(send_word::kFlushLevel));
  o.Set("words", static_cast<double>(send_word::kCount));
  o.Set("sgeAddr", static_cast<double>(sge_word::kAddr));
  o.Set("sgeLength", static_cast<double>(sge_word::kLength));
  o.Set("sgeLkey", static_cast<double>(sge_word::kLkey));
  o.Set("sgeWords", static_cast<double>(sge_word::kCount));
  return o;
}

Napi::Object RecvLayout(Napi::Env env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("wrId", static_cast<double>(recv_word::kWrId));
  o.Set("numSge", static_cast<double>(recv_word::kNumSge));
  o.Set("words", static_cast<double>(recv_word::kCount));
  return o;
}

}  // namespace

void RegisterConstants(Napi::Env env, Napi::Object exports) {
  exports.Set("constants", Constants(env));
  exports.Set("wcLayout", WcLayout(env));
  exports.Set("sendLayout", SendLayout(env));
  exports.Set("recvLayout", RecvLayout(env));
}

}  // namespace rdma_interop
