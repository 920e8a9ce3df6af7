{
  # no_external_buffers=1 (node-gyp rebuild --no_external_buffers=1, see
  # scripts/setup/no-external-addon.sh): the addon compiled with node-addon-api's
  # NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED, as for a Node with the V8 sandbox: every piece of
  # memory shared with JS is V8-allocated (native/js_memory.h).
  "variables": {"no_external_buffers%": 0},
  "targets": [
    {
      "target_name": "rdma_interop",
      "sources": [
        "native/module.cc",
        "native/errors.cc",
        "native/device.cc",
        "native/pd.cc",
        "native/mr.cc",
        "native/mr_rereg.cc",
        "native/cq.cc",
        "native/cq_ext.cc",
        "native/verbs_ext.cc",
        "native/qp.cc",
        "native/qp_post.cc",
        "native/work_request.cc",
        "native/fd_watcher.cc",
        "native/cm.cc",
        "native/ah.cc",
        "native/srq.cc",
        "native/mw.cc",
        "native/constants.cc",
        "native/crc32c.cc",
        "native/round_trip.cc",
        "native/round_trip_repeat.cc",
        "native/exchange.cc",
        "native/recv_refill.cc",
        "native/flush.cc",
        "native/js_memory.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      # NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS: a Napi::Error raised while the environment
      # ends (worker.terminate() during a native call) is dropped instead of turned into a
      # second C++ exception that escapes node-addon-api's callback wrapper (std::terminate,
      # "terminate called after throwing an instance of 'Napi::Error'") or a fatal error in
      # Error::Error. test/host/verbs/worker-teardown.test.ts provokes it.
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_API_SWALLOW_UNTHROWABLE_EXCEPTIONS"],
      "cflags!": ["-fno-exceptions"],
      "cflags_cc!": ["-fno-exceptions", "-fno-rtti"],
      "cflags_cc": ["-std=c++17", "-fexceptions", "-Wall", "-Wextra", "-Wno-missing-field-initializers"],
      "libraries": ["-libverbs", "-lrdmacm"],
      "conditions": [
        ["no_external_buffers==1", {"defines": ["NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED"]}]
      ]
    }
  ]
}
