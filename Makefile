# normlab: one entry point.
#   make            build the library, the command-line programs and the tests
#   make test       install missing Debian packages, build, run every test (FILTER=name for one op)
#   make test-asan  the tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   make test-tsan  the threaded kernels' tests under ThreadSanitizer (clang, LLVM OpenMP)
#   make fuzz       libFuzzer on the safetensors, IDX and flag parsers (FUZZ_SECONDS each)
#   make valgrind   one short training run under valgrind memcheck
#   make bench      benchmarks (medians and ratios, never pass/fail)
#   make bench-callgrind  the instructions of one tiny training step by phase and op
#   make bench-gemm-libs  the tiny step's 21 product shapes with OpenBLAS, BLIS, libxsmm, oneDNN
#                   (valgrind callgrind: the same counts under any load; NORM=rms)
#   make demo       the main job: train the demo GPT with the five norms, and on the papers'
#                   recipes, and compare them (RUNS=, NORMS=ln,mynorm for others,
#                   DEMO_FLAGS for a shorter recipe)
#   make demo-tuned each of the demo's norms and recipes at its best of the same grid of
#                   settings, chosen on a tuning split (docs/results/demo_tuned.md; ~30 min)
#   make bhyt-gap   why bhyt-released trails ln-released: controls and a long run (~1 h)
#   make dyt-trains which DyT settings leave the unigram plateau, 3 seeds each (~20 min)
#   make demo-vit   the same comparison for a ViT on Fashion-MNIST
# Options: CUDA=1 (build the CUDA backend; GPU_ARCH=sm_90 by default), DEBUG=1 (-O0 -g),
#          MPI=1 (data-parallel training over OpenMPI, build/release-mpi; with CUDA=1 also
#          NCCL: docs/distributed.md), GEMM=onednn (the products' tiles through oneDNN's
#          sgemm and matmul primitive instead of OpenBLAS, build/release-onednn; needs libdnnl-dev:
#          scripts/install-deps.sh gemm-libs; docs/performance.md, "Fused epilogues"),
#          THREADS=N for demo/bench, OPENBLAS_DIR=dir (OpenBLAS and Catch2 unpacked from
#          .deb files, for machines without them: scripts/gpu-check.sh).

SHELL := /bin/bash
.DEFAULT_GOAL := all
CXX ?= g++
NVCC ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(if $(NVCC),$(abspath $(dir $(NVCC))/..),/usr/local/cuda)
GPU_ARCH ?= sm_90
NPROC := $(shell nproc 2>/dev/null || echo 2)

# OPENBLAS_DIR: a folder with .deb files unpacked by `dpkg -x` (scripts/gpu-check.sh):
# OpenBLAS, and beside it Catch2's header, zlib and OpenBLAS's runtime libraries.
MULTIARCH := $(shell $(CXX) -print-multiarch 2>/dev/null)
ifneq ($(OPENBLAS_DIR),)
  OPENBLAS_INC := $(firstword $(wildcard $(OPENBLAS_DIR)/usr/include/$(MULTIARCH)/openblas-pthread $(OPENBLAS_DIR)/usr/include/$(MULTIARCH)/openblas-openmp))
  OPENBLAS_LIB := $(firstword $(wildcard $(OPENBLAS_DIR)/usr/lib/$(MULTIARCH)/openblas-pthread $(OPENBLAS_DIR)/usr/lib/$(MULTIARCH)/openblas-openmp))
  DEB_LIBS := $(OPENBLAS_LIB) $(wildcard $(OPENBLAS_DIR)/usr/lib/$(MULTIARCH) $(OPENBLAS_DIR)/lib/$(MULTIARCH))
  # DT_RPATH, not RUNPATH: it also applies to libopenblas's own dependency libgfortran
  DEB_LINK := -Wl,--disable-new-dtags $(foreach d,$(DEB_LIBS),-L$(d) -Wl,-rpath,$(d))
  BLAS_FLAGS := -I$(OPENBLAS_INC) -isystem $(OPENBLAS_DIR)/usr/include $(DEB_LINK)
endif

# ---- probes: what this machine offers (printed by `make info`, checked before building)
MARCH := $(shell echo 'int main(){}' | $(CXX) -march=native -x c++ - -o /dev/null 2>/dev/null && echo -march=native)
HAVE_OPENMP := $(shell echo 'int main(){}' | $(CXX) -fopenmp -x c++ - -o /dev/null 2>/dev/null && echo yes)
HAVE_OPENBLAS := $(shell printf '\043include <cblas.h>\nint main(){return 0;}\n' | $(CXX) -x c++ - $(BLAS_FLAGS) -lopenblas -o /dev/null 2>/dev/null && echo yes)

# The sanitizer builds keep line tables only (-g1 / -gline-tables-only: a report's stack
# names file and line, which is all it prints), and compile the test files at -O0 (their
# code is thin; the library they test keeps -O1): -O1 with full -g took three times as
# long to compile, the largest part of CI's time. TEST_OPT is appended to the test
# objects' flags; the ASan build's tests also leave UBSan's checks to the library, which
# is what UBSan is there for (the tests' own code took twice as long with them).
# COLD_OPT is appended to the flags of COLD_DIRS (train/ and studies/ here), the layers of
# flags, files, loops and reports, whose speed the tests' run does not feel (the kernels
# below them keep -O1): under ASan + UBSan train/loop/trainer.cpp compiled in 17 s at -O1,
# 9 s at -O0. The programs' thin mains (apps/) get COLD_OPT too.
COLD_DIRS := train studies
ifeq ($(SANITIZE),1)
  BUILD := build/asan
  OPT := -O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
  TEST_OPT := -O0 -fno-sanitize=undefined
  COLD_OPT := -O0
else ifeq ($(SANITIZE),fuzz)
  BUILD := build/fuzz
  OPT := -O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
else ifeq ($(SANITIZE),thread)
  BUILD := build/tsan
  OPT := -O1 -gline-tables-only -fno-omit-frame-pointer -fsanitize=thread
  TEST_OPT := -O0
  COLD_OPT := -O0
else ifeq ($(SANITIZE),memcheck)
  # valgrind's build (scripts/valgrind.sh): no -march=native (valgrind 3.19 does not
  # decode AVX-512) and line tables only, which is what its reports print
  BUILD := build/memcheck
  OPT := -O0 -g1
else ifeq ($(SANITIZE),callgrind)
  # the instruction-count benchmark's build (scripts/bench_callgrind.sh): the release
  # build's -O3 for AVX2 + FMA (valgrind 3.19 does not decode AVX-512); no debug
  # information, so that callgrind names each function once
  BUILD := build/callgrind
  OPT := -O3 -march=haswell
else ifeq ($(DEBUG),1)
  BUILD := build/debug
  OPT := -O0 -g
else
  BUILD := build/release
  # 512-bit vectors where the CPU has them (ignored elsewhere): GELU, exp and tanh loops
  # run 20-30 % faster on this project's AVX-512 machine than at GCC's default 256 bits
  OPT := -O3 $(MARCH) -mprefer-vector-width=512
  # Compiling, not running, is most of a fresh clone's `make test` (docs/performance.md,
  # "Build time"), so the code whose speed no run feels is compiled quickly:
  # - the tests' own code at -O0 (half the CPU time of -O1; the kernels it calls are the
  #   library's, at -O3, and the suite ran no slower);
  # - at -O0 (14-20 % less time than -O1 on top of the precompiled JSON, -O1 half of
  #   -O3's) the flags, files and reports, nlohmann-json and CLI11 code above all: what a
  #   run computes stays at -O3, since a lower level forms no FMAs and so could round a
  #   training step's numbers differently (train/loop, train/optim, train/safety, the
  #   models' tasks and studies/instruments, which measures each step); the checksums of
  #   train/io are zlib's.
  TEST_OPT := -O0
  COLD_OPT := -O0
  COLD_DIRS := train/flags train/io $(filter-out studies/instruments,$(wildcard studies/*))
endif
# the folder of this build without CUDA=1 / MPI=1: their objects are shared (below)
BASE_BUILD := $(BUILD)
ifeq ($(CUDA),1)
  BUILD := $(BUILD)-cuda
endif
ifeq ($(MPI),1)
  BUILD := $(BUILD)-mpi
endif
ifeq ($(GEMM),onednn)
  BUILD := $(BUILD)-onednn
else ifneq ($(filter-out openblas,$(GEMM)),)
  $(error GEMM=$(GEMM): choose openblas (the default) or onednn)
endif

# -fno-math-errno: no C errno from sqrt and the like (nothing here reads it), so that a
# loop with a square root can be vectorised (AdamW's was scalar); values do not change
CXXFLAGS := -std=c++17 $(OPT) -fno-math-errno -Wall -Wextra -Wno-unused-parameter -I. -MMD -MP
ifeq ($(HAVE_OPENMP),yes)
  CXXFLAGS += -fopenmp
  LDFLAGS += -fopenmp
endif
# gold, binutils' other linker, where it is installed: it links the test binary in about
# half the time of the default ld (1.7 s against 3.8 s; a program 0.4 s against 0.9 s), and
# a fresh clone links fourteen binaries (docs/performance.md, "Build time")
ifneq ($(shell command -v ld.gold 2>/dev/null),)
  LDFLAGS += -fuse-ld=gold
endif
# OpenBLAS's OpenMP build shares our OpenMP thread pool; the default pthread build
# would start a second pool whose spinning threads fight ours for the two cores.
OPENBLAS_OMP := $(if $(OPENBLAS_DIR),,$(wildcard /usr/lib/$(MULTIARCH)/openblas-openmp))
# The clang builds (fuzz, tsan) use LLVM's OpenMP runtime, which must not meet libgomp
# (OpenBLAS's OpenMP build links it): they take OpenBLAS's pthread build instead.
ifneq ($(filter fuzz thread,$(SANITIZE)),)
  OPENBLAS_OMP := $(if $(OPENBLAS_DIR),,$(wildcard /usr/lib/$(MULTIARCH)/openblas-pthread))
endif
ifneq ($(OPENBLAS_DIR),)
  CXXFLAGS += -I$(OPENBLAS_INC) -isystem $(OPENBLAS_DIR)/usr/include
  LDFLAGS += $(DEB_LINK)
endif
ifneq ($(OPENBLAS_OMP),)
  LDFLAGS += -L$(OPENBLAS_OMP) -Wl,-rpath,$(OPENBLAS_OMP)
endif
# -llapacke: LAPACK's C interface (Debian's liblapacke-dev; the SVD of studies/instruments).
# Its LAPACK routines (dgesdd_) bind to OpenBLAS's own LAPACK in libopenblas, a direct
# dependency loaded first, so no -llapack (the linker would drop it as unneeded anyway).
LDLIBS := -llapacke -lopenblas -lz -lm

# the layers, bottom up (scripts/check-layers.sh keeps their includes pointing down)
LIB_SRCS := $(wildcard tensor/*.cpp tensor/cpu/*.cpp autograd/*.cpp nn/*.cpp nn/norms/*.cpp train/*/*.cpp studies/*/*.cpp)
# LIB_OMIT: patterns of library sources a partial build leaves out, with TEST_SRCS=the
# tests that need none of them (scripts/tsan.sh: LIB_OMIT=studies/%)
LIB_SRCS := $(filter-out $(LIB_OMIT),$(LIB_SRCS))
ifeq ($(CUDA),1)
  CU_SRCS := $(wildcard tensor/cuda/*.cu)
  VARIANT_CXXFLAGS += -DNL_CUDA
  NVCCFLAGS := -std=c++17 -O3 -I. -DNL_CUDA -arch=$(GPU_ARCH) -Xcompiler -fopenmp,-Wall -MMD -MP
  LDFLAGS += -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64
  LDLIBS += -lcudart -lcublas
else
  LIB_SRCS += tensor/cuda/stub.cpp
endif
# GEMM=onednn: tensor/cpu/gemm.cpp hands each tile to oneDNN's sgemm, or for x W^T over an
# inner dimension of 256 or more its matmul primitive (one thread per tile, as OpenBLAS's);
# OpenBLAS stays linked for everything else (attention's tiles, LAPACK)
ifeq ($(GEMM),onednn)
  VARIANT_CXXFLAGS += -DNL_GEMM_ONEDNN
  LDLIBS += -ldnnl
endif
# MPI=1: OpenMPI's compile and link flags as its wrapper compiler reports them (only
# train/safety/distributed.cpp uses them); with CUDA=1 also NCCL for the device buffers.
ifeq ($(MPI),1)
  MPICXX ?= mpicxx
  MPI_COMPILE := $(shell $(MPICXX) --showme:compile 2>/dev/null)
  MPI_LINK := $(shell $(MPICXX) --showme:link 2>/dev/null)
  ifeq ($(MPI_LINK),)
    $(error MPI=1 needs OpenMPI's mpicxx (apt-get install libopenmpi-dev openmpi-bin))
  endif
  LDFLAGS += $(MPI_LINK)
  $(BUILD)/train/safety/distributed.o: CXXFLAGS += -DNL_MPI $(MPI_COMPILE)
  ifeq ($(CUDA),1)
    $(BUILD)/train/safety/distributed.o: CXXFLAGS += -DNL_NCCL -I$(CUDA_HOME)/include
    LDLIBS += -lnccl
  endif
endif
# A CUDA=1, MPI=1 or GEMM=onednn build compiles in its own folder only the sources that name one of
# the macros it sets (today train/safety/distributed.cpp, tensor/cpu/gemm.cpp) and takes every other library
# object from the plain build's folder, where the same compiler and flags make the same
# object: `make MPI=1` after `make` compiles one file, and CI's CUDA check compiles the
# .cu files, not the library again. Should a header ever test one of the macros, every
# source is compiled per build again.
VARIANT_MACROS := NL_CUDA|NL_MPI|NL_NCCL|NL_GEMM_ONEDNN
ifneq ($(BUILD),$(BASE_BUILD))
  ifeq ($(shell grep -rlE '$(VARIANT_MACROS)' --include=*.h tensor autograd nn train studies 2>/dev/null),)
    VARIANT_SRCS := $(shell grep -lE '$(VARIANT_MACROS)' $(LIB_SRCS) 2>/dev/null)
  else
    VARIANT_SRCS := $(LIB_SRCS)
  endif
else
  VARIANT_SRCS := $(LIB_SRCS)
endif
# the test sources test no such macro (the programs they run are found at run time,
# tests/test_files.h: build_dir()), so a CUDA=1 / MPI=1 test binary links the plain
# build's test objects, unless one does
SHARED_TESTS_IN := $(if $(shell grep -lE '$(VARIANT_MACROS)' $(wildcard tests/*/*.cpp tests/*.h) 2>/dev/null),$(BUILD),$(BASE_BUILD))
VARIANT_OBJS := $(VARIANT_SRCS:%.cpp=$(BUILD)/%.o)
SHARED_OBJS := $(patsubst %.cpp,$(BASE_BUILD)/%.o,$(filter-out $(VARIANT_SRCS),$(LIB_SRCS)))
LIB_OBJS := $(SHARED_OBJS) $(VARIANT_OBJS) $(CU_SRCS:%.cu=$(BUILD)/%.cu.o)
$(VARIANT_OBJS): CXXFLAGS += $(VARIANT_CXXFLAGS)

# The studies' report templates (studies/*/*.md.in), compiled into the library as
# string literals: `#include "studies/x/report.md.in.h"` inside a char array. One copy
# per plain build: they do not depend on CUDA=1 / MPI=1.
TEMPLATES := $(wildcard studies/*/*.md.in)
TEMPLATE_HEADERS := $(TEMPLATES:%=$(BASE_BUILD)/gen/%.h)
CXXFLAGS += -I$(BASE_BUILD)/gen
$(BASE_BUILD)/gen/%.md.in.h: %.md.in
	@mkdir -p $(dir $@)
	@{ printf 'R"NL_TEMPLATE('; cat $<; printf ')NL_TEMPLATE"\n'; } > $@
$(LIB_OBJS): | $(TEMPLATE_HEADERS)
LIB := $(BUILD)/libnormlab.a

# the programs: thin mains over the layers, one file each
CLI_SRCS := $(wildcard apps/*.cpp)
CLIS := $(CLI_SRCS:apps/%.cpp=$(BUILD)/%)
# each main compiled to its own object, so that a library change relinks the programs
# without compiling their mains again, and its .d file (included below) rebuilds it
# when a header it includes changes
CLI_OBJS := $(CLI_SRCS:%.cpp=$(BUILD)/%.o)
BENCH_SRCS := $(wildcard bench/*.cpp)
ifneq ($(CUDA),1)
  BENCH_SRCS := $(filter-out bench/bench_gpu.cpp,$(BENCH_SRCS))  # needs cuBLAS
endif
BENCHES := $(BENCH_SRCS:bench/%.cpp=$(BUILD)/%)
# The test files compile in groups: each group of up to TEST_GROUP files of one folder is
# one generated translation unit (scripts/unity.sh says why and what it asks of a
# test file). TEST_GROUP=1 compiles each file alone, which checks that it includes all it uses.
TEST_GROUP ?= 10
TEST_SRCS ?= $(wildcard tests/*/*.cpp)
TEST_UNITS := $(shell bash scripts/unity.sh $(BASE_BUILD)/unity/tests-by-$(TEST_GROUP) $(TEST_GROUP) $(TEST_SRCS))
TEST_OBJS := $(TEST_UNITS:$(BASE_BUILD)/unity/%.cpp=$(SHARED_TESTS_IN)/unity/%.o)
$(TEST_OBJS): private CXXFLAGS += $(TEST_OPT)
$(SHARED_TESTS_IN)/unity/%.o: $(BASE_BUILD)/unity/%.cpp
	$(CXX) $(CXXFLAGS) -c $< -o $@
# The sanitizer builds (ASan, TSan, valgrind's, libFuzzer's) compile the library in such
# groups too (LIB_GROUP sources of one folder a unit; LIB_GROUP=1: file by file): the ASan build's
# compiling was the largest stage of CI, and most of an object's time went to
# nlohmann-json's and CLI11's templates, instantiated and instrumented once a file (the ASan
# library: 333 s of CPU file by file, 202 s grouped; scripts/build-times.sh). Only there:
# the release build keeps one object per file for quick rebuilds and so that its -O3 code,
# which a run's numbers come from, is not inlined differently (LIB_GROUP=N asks for groups
# in any build). Every library source in a group must therefore also compile in one unit
# with the others of its folder (what scripts/unity.sh asks of test files), which the
# sanitizer builds check. Left file by file: nn/norms/, where a new norm goes
# (docs/your-own-norm.md: adding one rebuilds the registry and the new file, not the folder;
# its test's ASan run took 41 s with the folder grouped, 27 s without), and the sources that
# name a CUDA=1, MPI=1 or GEMM=onednn macro, which such a build compiles in its own folder
# while it links the plain build's groups (above).
# GCC, not clang: the groups' warning flag below and the precompiled headers are GCC's
IS_GCC := $(if $(filter 0,$(shell $(CXX) --version 2>/dev/null | grep -c 'Free Software Foundation')),,yes)
ifneq ($(filter 1 thread memcheck fuzz,$(SANITIZE)),)
  LIB_GROUP ?= 10
endif
ifneq ($(filter-out 0 1,$(or $(LIB_GROUP),1)),)
  MACRO_SRCS := $(shell grep -lE '$(VARIANT_MACROS)' $(LIB_SRCS) 2>/dev/null)
  UNIT_SRCS := $(filter-out tensor/cuda/stub.cpp nn/norms/% $(MACRO_SRCS) \
                 $(if $(filter-out $(BASE_BUILD),$(BUILD)),$(VARIANT_SRCS)),$(LIB_SRCS))
  LIB_UNITS := $(if $(UNIT_SRCS),$(shell bash scripts/unity.sh $(BASE_BUILD)/unity/lib-by-$(LIB_GROUP) \
                 $(LIB_GROUP) $(UNIT_SRCS)))
  LIB_UNIT_OBJS := $(LIB_UNITS:%.cpp=%.o)
  LIB_OBJS := $(LIB_UNIT_OBJS) $(filter-out $(UNIT_SRCS:%.cpp=$(BASE_BUILD)/%.o),$(LIB_OBJS))
  $(LIB_UNIT_OBJS): | $(TEMPLATE_HEADERS)
  $(BASE_BUILD)/unity/lib-by-$(LIB_GROUP)/%.o: $(BASE_BUILD)/unity/lib-by-$(LIB_GROUP)/%.cpp
	$(CXX) $(CXXFLAGS) -c $< -o $@
  # a type of a file's anonymous namespace in one of its classes: GCC's warning for headers,
  # which an included source file now looks like to it (clang has no such warning)
  ifeq ($(IS_GCC),yes)
    $(LIB_UNIT_OBJS): private CXXFLAGS += -Wno-subobject-linkage
  endif
endif
# Precompiled headers (GCC's .gch, 80-130 MB each), loaded by an object in place of parsing
# what they hold: Catch2, nlohmann-json and the standard headers for every test group
# (tests/pch.h), and nlohmann-json for the library's objects that parse it
# (scripts/json-users.sh lists them: 63 of the 162 library and program sources), 0.5-0.8 s
# less CPU for each such object (docs/performance.md, "Build time"). A .gch serves only
# objects compiled with the flags it was (GCC refused an -O1 one at -O3 by crashing), so
# there is one per group: the tests, the library's COLD_OPT objects (COLD_DIRS, the
# programs' mains) and its -O3 ones that parse JSON. Loading one costs 0.3-0.5 s, which is
# why a library object that does not parse JSON gets none. GCC
# looks for X.gch beside the X named by -include, so the header is copied there; a .gch GCC
# cannot use is skipped for that copy, with the same result, and -Winvalid-pch says so. A
# .gch is remade when its flags, the compiler or (for -march=native) the CPU change:
# $(PCH_STAMP) holds them, rewritten only when they differ. Clang (the TSan and fuzz
# builds) goes without. The flags of a .gch are fixed here, so it inherits nothing from
# the objects that need it. ccache caches a compile that loads a precompiled header,
# and the .gch itself (GCC's are not the same bytes twice, so an object compiled in another
# worktree hits only with the cached .gch), only with the sloppiness pch_defines,
# time_macros, added here to the configured one.
COLD_OBJS := $(filter $(foreach d,$(COLD_DIRS),$(BUILD)/$(d)/% $(BASE_BUILD)/$(d)/% \
               $(BASE_BUILD)/unity/lib-by-$(LIB_GROUP)/$(subst /,-,$(d))-%),$(LIB_OBJS)) $(CLI_OBJS)
ifeq ($(IS_GCC),yes)
  JSON_SRCS := $(shell bash scripts/json-users.sh tensor autograd nn train studies apps)
  # (and every library unit: 15 of the ASan build's 23 hold a file that parses JSON, and the
  # others pay the 0.3-0.5 s of loading it, less than telling them apart would be worth)
  JSON_OBJS := $(JSON_SRCS:%.cpp=$(BASE_BUILD)/%.o) $(JSON_SRCS:%.cpp=$(BUILD)/%.o) $(LIB_UNIT_OBJS)
  PCH_SLOPPINESS := $(shell ccache --get-config sloppiness 2>/dev/null | tr -d ' '),pch_defines,time_macros
  PCH_FLAGS := $(filter-out -MMD -MP,$(CXXFLAGS))
  PCH_STAMP := $(BASE_BUILD)/pch/made-with
  PCH_MADE_WITH := $(shell $(CXX) -dumpfullversion) $(PCH_FLAGS) | $(TEST_OPT) | $(COLD_OPT) | $(if \
    $(filter -march=native,$(PCH_FLAGS)),$(shell grep -m1 '^flags' /proc/cpuinfo | cksum))
  $(shell mkdir -p $(BASE_BUILD)/pch && { [ "$$(cat $(PCH_STAMP) 2>/dev/null)" = '$(PCH_MADE_WITH)' ] || \
    echo '$(PCH_MADE_WITH)' > $(PCH_STAMP); })
  # $(call precompiled,HEADER,GROUP,FLAGS,OBJECTS): HEADER precompiled with FLAGS for OBJECTS
  define precompiled
    $(BASE_BUILD)/pch/$(2)/$(1).gch: $(1) $(5) $(PCH_STAMP)
	@mkdir -p $$(dir $$@)
	cp $$< $(BASE_BUILD)/pch/$(2)/$(1)
	$$(CXX) $$(PCH_FLAGS) $(3) -x c++-header $$< -o $$@
    $(4): $(BASE_BUILD)/pch/$(2)/$(1).gch
    $(4): private CXXFLAGS += -Winvalid-pch -include $(BASE_BUILD)/pch/$(2)/$(1)
    $(4) $(BASE_BUILD)/pch/$(2)/$(1).gch: export CCACHE_SLOPPINESS := $(PCH_SLOPPINESS)
  endef
  $(eval $(call precompiled,tests/pch.h,tests,$(TEST_OPT),$(TEST_OBJS)))
  $(eval $(call precompiled,train/io/pch_json.h,cold,$(COLD_OPT),$(filter $(JSON_OBJS),$(COLD_OBJS))))
  $(eval $(call precompiled,train/io/pch_json.h,hot,,$(filter-out $(COLD_OBJS),$(filter $(JSON_OBJS),$(LIB_OBJS)))))
endif
$(COLD_OBJS): CXXFLAGS += $(COLD_OPT)
TEST_BIN := $(BUILD)/run_tests

.PHONY: all info deps test test-asan test-tsan fuzz valgrind bench-callgrind bench-gemm-libs bench benches demo demo-tuned demo-vit bhyt-gap dyt-trains clean
all: info $(LIB) $(CLIS) $(TEST_BIN)

info:
	@echo "normlab build: $(BUILD)  |  OpenBLAS: $(or $(HAVE_OPENBLAS),MISSING)$(if $(OPENBLAS_DIR), from $(OPENBLAS_DIR))  OpenMP: $(or $(HAVE_OPENMP),no) ($(if $(OPENBLAS_OMP),OpenMP,pthread) OpenBLAS)  march: $(or $(MARCH),generic)  nvcc: $(or $(NVCC),none)  CUDA=$(or $(CUDA),0)$(if $(filter 1,$(CUDA)), GPU_ARCH=$(GPU_ARCH))  MPI=$(or $(MPI),0)  GEMM=$(or $(GEMM),openblas)"

deps:
	@bash scripts/install-deps.sh

$(BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@

ifneq ($(BUILD),$(BASE_BUILD))
$(BASE_BUILD)/%.o: %.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -c $< -o $@
endif

$(BUILD)/%.cu.o: %.cu
	@mkdir -p $(dir $@)
	$(NVCC) $(NVCCFLAGS) -MF $(@:.o=.d) -c $< -o $@

$(LIB): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(CLIS): $(BUILD)/%: $(BUILD)/apps/%.o $(LIB)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

$(BUILD)/%: bench/%.cpp $(LIB)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) $< $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

# libFuzzer targets, built only in the SANITIZE=fuzz build (scripts/fuzz.sh drives it),
# from the tensor layer and the three parsers only: a third of the library to compile
FUZZ_SRCS := $(wildcard tensor/*.cpp tensor/cpu/*.cpp) tensor/cuda/stub.cpp train/io/safetensors.cpp train/io/checksum.cpp \
             train/data/fashion_mnist.cpp train/flags/flag_parser.cpp train/io/files.cpp train/io/text_fields.cpp
# (tensor/'s sources in the groups above, where the build has them)
FUZZ_GROUPED := $(filter tensor/%,$(UNIT_SRCS))
FUZZ_OBJS := $(filter $(BASE_BUILD)/unity/lib-by-$(LIB_GROUP)/tensor-%,$(LIB_UNIT_OBJS)) \
             $(patsubst %.cpp,$(BUILD)/%.o,$(filter-out $(FUZZ_GROUPED),$(FUZZ_SRCS)))
$(BUILD)/%: fuzz/%.cpp $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(CXX) $(CXXFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) $(LDFLAGS) $(LDLIBS) -o $@

# Catch2's main is compiled once, in its own object, and never rebuilt with the tests;
# at -O0, since it is Catch2's whole implementation: 12 s of CPU against 19 s at -O3
# (and with TEST_OPT: under ASan without UBSan's checks, as the tests' own code).
$(BASE_BUILD)/catch_main.o: tests/catch_main.cc
	@mkdir -p $(dir $@)
	$(CXX) $(filter-out -MMD -MP,$(CXXFLAGS)) -O0 $(TEST_OPT) -c $< -o $@

$(TEST_BIN): $(TEST_OBJS) $(BASE_BUILD)/catch_main.o $(LIB)
	$(CXX) $(CXXFLAGS) $(TEST_OBJS) $(BASE_BUILD)/catch_main.o $(LIB) $(LDFLAGS) $(LDLIBS) -o $@

# the programs the [mpi] tests run from $(BUILD)-mpi (.ci/run builds them first)
MPI_TEST_PROGRAMS := train_gpt depth_study

# `make test FILTER=layernorm` runs the tests whose name contains "layernorm".
test: deps
	@$(MAKE) --no-print-directory info
	@bash scripts/check-layers.sh
	@bash scripts/check-unity-names.sh
	@$(MAKE) --no-print-directory -j$(NPROC) $(TEST_BIN) $(CLIS)
	@# the [mpi] tests run $(BUILD)-mpi/train_gpt and the MPI studies: kept up to date once `make MPI=1` made them
	@if [ "$(MPI)" != 1 ] && [ -d $(BUILD)-mpi ] && command -v mpicxx >/dev/null; then \
	  $(MAKE) --no-print-directory -j$(NPROC) MPI=1 $(MPI_TEST_PROGRAMS:%=$(BUILD)-mpi/%); fi
	@bash scripts/run-tests.sh $(TEST_BIN) "$(FILTER)"

test-asan: deps
	@$(MAKE) --no-print-directory SANITIZE=1 test

# ThreadSanitizer needs clang and LLVM's OpenMP with its Archer tool: libgomp's own
# synchronisation is invisible to TSan and reads as races (scripts/tsan.sh explains).
test-tsan: deps
	@bash scripts/tsan.sh

# FUZZ_SECONDS per target (default 60); crashes land in build/fuzz/crashes/.
fuzz: deps
	@bash scripts/fuzz.sh $(or $(FUZZ_SECONDS),60)

valgrind: deps
	@bash scripts/valgrind.sh

# NORM=rms for another norm than ln (scripts/bench_callgrind.sh)
bench-callgrind: deps
	@bash scripts/bench_callgrind.sh $(or $(NORM),ln)

# each library in a binary of its own (OpenBLAS and BLIS export the same BLAS symbols)
bench-gemm-libs: deps $(LIB)
	@bash scripts/install-deps.sh gemm-libs
	@bash scripts/bench_gemm_libs.sh $(BUILD) "$(or $(THREADS_LIST),1 2)" $(or $(REPS),30)

# every benchmark built, none run (CI's compile check of the CUDA build uses it)
benches: $(BENCHES)

bench: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(BENCHES) $(CLIS)
	@for b in $(BENCHES); do echo "== $$b"; $$b || exit 1; done

# RUNS="a=--norm ln,dyt-llm" picks the runs (compare_norms --arms; default: its own ten),
# NORMS=ln,dyt,mynorm the same with bare norms, DEMO_FLAGS adds compare_norms flags (a
# shorter recipe: "--steps 60 --layers 2"), DEMO_OUT the folder.
demo: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@RUNS="$(RUNS)" NORMS="$(NORMS)" DEMO_FLAGS="$(DEMO_FLAGS)" bash scripts/demo.sh $(BUILD)

# TUNE, TUNE_DYT, RUNS, DEMO_FLAGS ("--dry-run": its cells and price), DEMO_OUT, DOC:
# scripts/demo_tuned.sh
demo-tuned: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@TUNE="$(TUNE)" TUNE_DYT="$(TUNE_DYT)" RUNS="$(RUNS)" DEMO_FLAGS="$(DEMO_FLAGS)" DOC="$(DOC)" \
	  bash scripts/demo_tuned.sh $(BUILD)

demo-vit: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@bash scripts/demo_vit.sh $(BUILD)

# GAP_FLAGS, GAP_OUT: scripts/bhyt_gap.sh (docs/results/bhyt_gap.md; about an hour on 2 cores)
bhyt-gap: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@GAP_FLAGS="$(GAP_FLAGS)" GAP_OUT="$(GAP_OUT)" bash scripts/bhyt_gap.sh $(BUILD)

# TRAINS_FLAGS, TRAINS_OUT: scripts/dyt_trains.sh (docs/results/dyt_trains.md; ~20 min on 2 cores)
dyt-trains: deps
	@$(MAKE) --no-print-directory -j$(NPROC) $(CLIS)
	@TRAINS_FLAGS="$(TRAINS_FLAGS)" TRAINS_OUT="$(TRAINS_OUT)" bash scripts/dyt_trains.sh $(BUILD)

clean:
	rm -rf build

-include $(LIB_OBJS:.o=.d) $(TEST_OBJS:.o=.d) $(CLI_OBJS:.o=.d) $(CU_SRCS:%.cu=$(BUILD)/%.cu.d)
