#!/bin/sh
# Fetch the wheels a lent GPU machine may lack (it has no network) into .wheels/, for
# `bench/gpu_check.sh` to install there: llvmlite >= 0.45 for its Python 3.12.  Run here,
# then call the device tool with carry ['.wheels'] (the wheel is ~55 MB of the 64 MiB).
set -eu
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 "llvmlite==0.45.1" -d .wheels
ls -la .wheels
