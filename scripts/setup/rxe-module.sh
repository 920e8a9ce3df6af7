#!/usr/bin/env bash
# rxe-module.sh [LINE...]: the fixed rdma_rxe.ko of each line (patches/rxe-fixes/), cached;
# scripts/setup/fixed-module.sh does the work (as for the fixed siw.ko: fixed-module.sh siw).
exec bash "$(dirname "$0")/fixed-module.sh" rxe "$@"
