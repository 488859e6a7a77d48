/* A stand-in for libcuda.so.1 that tests tk's Python GPU launch path on a
 * machine without a GPU (CI). Every entry point tk's CudaDriver looks up
 * exists and succeeds; nothing runs. cuLaunchKernel records what it was
 * given, and the test reads it back through ctypes:
 *
 *   cc -shared -fPIC -Wl,-soname,libcuda.so.1 -o libcuda.so.1 fake_cuda.c
 *   lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)  # before tk loads "libcuda.so.1"
 *   lib.fake_set_param_sizes((ctypes.c_int * 3)(8, 8, 4), 3)
 *   kernel[(4,)](...)
 *   lib.fake_launch_count(), lib.fake_last_grid(0), lib.fake_last_param(i)  # this thread's
 *   lib.fake_loaded_modules()  # modules loaded and not unloaded
 *   lib.fake_module_loads(), lib.fake_module_unloads()  # totals since the start
 *   lib.fake_unloads_outside_primary()  # unloads without the primary context current
 *   lib.fake_replay_launches(n)  # ns per call of this stand-in's cuLaunchKernel
 *
 *   lib.fake_set_launch_hook(hook)  # hook(gx, gy, gz, params): the kernel's work, in the test
 *   lib.fake_last_image()  # the text of the launched kernel's module (its PTX), for the hook
 *   lib.fake_graph_calls()  # the graph calls since fake_graph_calls_reset(), in order
 *   lib.fake_live_graphs()  # graphs and executable graphs created and not destroyed
 *
 * Knobs (environment, read at each call): FAKE_CUDA_LOAD_ERROR makes module
 * loading fail with that text as the JIT error log; FAKE_CUDA_MAX_THREADS is
 * what cuFuncGetAttribute reports as the most threads per program (1024);
 * FAKE_CUDA_LAUNCH_ERROR=1 makes cuLaunchKernel fail;
 * FAKE_CUDA_GRAPH_ERROR=1 makes cuGraphInstantiateWithFlags fail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int CUresult;
#define OK 0

/* Counters that threads (tk's parallel compiles, concurrent launches)
 * update at once. */
#define ADD(counter, n) __atomic_fetch_add(&(counter), (n), __ATOMIC_RELAXED)
static int launches;
static int loadedModules, moduleLoads, moduleUnloads, unloadsOutsidePrimary;
/* The calling thread's current context: cuModuleUnload must find the
 * primary one (0x10) current. */
static __thread void *currentContext;
/* The calling thread's last launch: threads launching at once (tk's
 * concurrent launch tests) each keep their own record. */
static __thread unsigned lastGrid[3], lastBlock[3], lastShared;
static __thread uint64_t lastStream;
static int paramSizes[64], numParamSizes;
static __thread uint64_t lastParams[64];
/* A 128-byte parameter (a CUtensorMap, aligned to 64) of the last launch:
 * its bytes here, its first 8 in lastParams. */
static __thread unsigned char lastMap[128];
unsigned fake_last_map_byte(int i) { return lastMap[i]; }

/* A loaded module keeps a copy of its image up to the first NUL (all of a
 * PTX text), so a launch hook can compute what the launched code says
 * (fake_last_image); the module's one function is the module itself. The
 * copies are never freed: a launch hook may read one after an unload, and a
 * test process loads a few dozen modules. */
typedef struct {
  char *image;
} FakeModule;
static __thread FakeModule *lastFunction;
static void *loadModule(const void *image) {
  FakeModule *m = (FakeModule *)malloc(sizeof(FakeModule));
  m->image = strdup(image ? (const char *)image : "");
  return m;
}
const char *fake_last_image(void) { return lastFunction ? lastFunction->image : ""; }

void fake_set_param_sizes(const int *sizes, int n) {
  numParamSizes = n > 64 ? 64 : n;
  for (int i = 0; i < numParamSizes; ++i)
    paramSizes[i] = sizes[i];
}
int fake_launch_count(void) { return __atomic_load_n(&launches, __ATOMIC_RELAXED); }
int fake_loaded_modules(void) { return __atomic_load_n(&loadedModules, __ATOMIC_RELAXED); }
int fake_module_loads(void) { return __atomic_load_n(&moduleLoads, __ATOMIC_RELAXED); }
int fake_module_unloads(void) { return __atomic_load_n(&moduleUnloads, __ATOMIC_RELAXED); }
int fake_unloads_outside_primary(void) {
  return __atomic_load_n(&unloadsOutsidePrimary, __ATOMIC_RELAXED);
}
unsigned fake_last_grid(int i) { return lastGrid[i]; }
unsigned fake_last_block(int i) { return lastBlock[i]; }
unsigned fake_last_shared(void) { return lastShared; }
uint64_t fake_last_stream(void) { return lastStream; }
uint64_t fake_last_param(int i) { return lastParams[i]; }

CUresult cuInit(unsigned f) {
  (void)f;
  return OK;
}
CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return OK;
}
CUresult cuDeviceGet(int *d, int i) {
  *d = i;
  return OK;
}
CUresult cuDeviceGetCount(int *n) {
  *n = 1;
  return OK;
}
CUresult cuDeviceGetName(char *name, int len, int d) {
  (void)d;
  strncpy(name, "Fake GPU", (size_t)len);
  return OK;
}
CUresult cuDeviceGetAttribute(int *v, int attr, int d) {
  (void)d;
  switch (attr) {
  case 1:
    *v = 1024;
    break; /* max threads per block */
  case 8:
    *v = 49152;
    break; /* max shared per block */
  case 12:
    *v = 65536;
    break; /* max registers per block */
  case 16:
    *v = 132;
    break; /* SMs */
  case 75:
    *v = 9;
    break; /* compute capability */
  case 76:
    *v = 0;
    break;
  case 97:
    *v = 232448;
    break; /* opt-in shared per block */
  default:
    *v = 0;
    break;
  }
  return OK;
}
CUresult cuDevicePrimaryCtxRetain(void **c, int d) {
  (void)d;
  *c = (void *)0x10;
  return OK;
}
CUresult cuCtxSetCurrent(void *c) {
  currentContext = c;
  return OK;
}
CUresult cuCtxGetCurrent(void **c) {
  *c = currentContext;
  return OK;
}
CUresult cuCtxSynchronize(void) { return OK; }

static CUresult loadResult(unsigned n, int *opts, void **vals) {
  const char *err = getenv("FAKE_CUDA_LOAD_ERROR");
  if (!err)
    return OK;
  for (unsigned i = 0; i < n; ++i)
    if (opts[i] == 5 /* CU_JIT_ERROR_LOG_BUFFER */) {
      size_t cap = 0;
      for (unsigned j = 0; j < n; ++j)
        if (opts[j] == 6)
          cap = (size_t)(uintptr_t)vals[j];
      strncpy((char *)vals[i], err, cap);
    }
  return 218; /* CUDA_ERROR_INVALID_PTX */
}
CUresult cuModuleLoadDataEx(void **m, const void *image, unsigned n, int *opts, void **vals) {
  CUresult r = loadResult(n, opts, vals);
  if (r == OK) {
    *m = loadModule(image);
    ADD(loadedModules, 1);
    ADD(moduleLoads, 1);
  }
  return r;
}
CUresult cuModuleLoadData(void **m, const void *image) {
  *m = loadModule(image);
  ADD(loadedModules, 1);
  ADD(moduleLoads, 1);
  return OK;
}
CUresult cuModuleUnload(void *m) {
  (void)m;
  ADD(loadedModules, -1);
  ADD(moduleUnloads, 1);
  if (currentContext != (void *)0x10)
    ADD(unloadsOutsidePrimary, 1);
  return OK;
}
CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
  (void)name;
  *f = m;
  return OK;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) {
  (void)f;
  const char *t = getenv("FAKE_CUDA_MAX_THREADS");
  switch (attr) {
  case 0:
    *v = t ? atoi(t) : 1024;
    break; /* max threads per block */
  case 4:
    *v = 40;
    break; /* registers */
  default:
    *v = 0;
    break;
  }
  return OK;
}
CUresult cuFuncSetAttribute(void *f, int attr, int v) {
  (void)f;
  (void)attr;
  (void)v;
  return OK;
}
/* The parameters arrive either as kernelParams (one pointer per parameter)
 * or packed in one buffer through `extra` (CU_LAUNCH_PARAM_BUFFER_POINTER 1,
 * CU_LAUNCH_PARAM_BUFFER_SIZE 2, CU_LAUNCH_PARAM_END 0), each parameter at
 * its natural alignment, as the driver reads them. */
static __thread int lastUsedExtra;
static void recordParams(void **params, void **extra) {
  const char *buffer = 0;
  lastUsedExtra = params == 0 && extra != 0;
  for (int i = 0; lastUsedExtra && extra[i] != 0; i += 2)
    if ((uintptr_t)extra[i] == 1)
      buffer = (const char *)extra[i + 1];
  size_t offset = 0;
  for (int i = 0; i < numParamSizes; ++i) {
    size_t size = (size_t)paramSizes[i];
    lastParams[i] = 0;
    if (size == 128) {
      offset = (offset + 63) / 64 * 64;
      memcpy(lastMap, buffer ? buffer + offset : (const char *)params[i], 128);
      memcpy(&lastParams[i], lastMap, 8);
      offset += 128;
      continue;
    }
    if (buffer) {
      offset = (offset + size - 1) / size * size;
      memcpy(&lastParams[i], buffer + offset, size);
      offset += size;
    } else if (params) {
      memcpy(&lastParams[i], params[i], size);
    }
  }
}

/* What a kernel would do, played by the test (TK_CHECK's tests): called by
 * each launch with its grid and its parameters as decoded by
 * fake_set_param_sizes. Device memory is host memory here (cuMemAlloc is
 * malloc, copies are memcpy), so the hook may write the outputs. */
typedef void (*LaunchHook)(unsigned, unsigned, unsigned, const uint64_t *);
static LaunchHook launchHook;
void fake_set_launch_hook(LaunchHook hook) { launchHook = hook; }

/* CUDA graphs. cuStreamBeginCapture_v2 makes one stream capturing (the
 * legacy default stream, 0, is refused with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900, as the driver does): its
 * launches are recorded, not run (no launch counted, no hook), and a failed
 * launch invalidates the capture, so that cuStreamEndCapture returns
 * CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901). The graph is the number of
 * launches recorded; cuGraphLaunch counts that many launches. Every graph
 * call is appended to a log (fake_graph_calls): "begin end instantiate
 * launch destroy-exec destroy". */
static void *capturing;
static int captureInvalid, captured, liveGraphs;
static char graphCalls[4096];
static void logGraphCall(const char *call) {
  size_t n = strlen(graphCalls);
  if (n + strlen(call) + 2 < sizeof graphCalls) {
    if (n)
      graphCalls[n++] = ' ';
    strcpy(graphCalls + n, call);
  }
}
const char *fake_graph_calls(void) { return graphCalls; }
void fake_graph_calls_reset(void) { graphCalls[0] = 0; }
int fake_live_graphs(void) { return liveGraphs; }

CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  const char *fail = getenv("FAKE_CUDA_LAUNCH_ERROR");
  int recording = capturing && stream == capturing;
  if (fail && fail[0] == '1') {
    captureInvalid |= recording;
    return 700; /* CUDA_ERROR_ILLEGAL_ADDRESS */
  }
  if (recording) {
    logGraphCall("record");
    ++captured;
    return OK;
  }
  ADD(launches, 1);
  lastFunction = (FakeModule *)f;
  lastGrid[0] = gx, lastGrid[1] = gy, lastGrid[2] = gz;
  lastBlock[0] = bx, lastBlock[1] = by, lastBlock[2] = bz;
  lastShared = shared;
  lastStream = (uint64_t)(uintptr_t)stream;
  recordParams(params, extra);
  if (launchHook)
    launchHook(gx, gy, gz, lastParams);
  return OK;
}
int fake_last_used_extra(void) { return lastUsedExtra; }

/* cuTensorMapEncodeTiled records its arguments (fake_encode_field: 0 data
 * type, 1 rank, 2 address, 3 dims[i], 4 strides[i], 5 box[i], 6 element
 * strides[i], 7 interleave, 8 swizzle, 9 L2 promotion, 10 OOB fill) and
 * writes byte i of the map as i ^ the data type; FAKE_CUDA_ENCODE_ERROR=1
 * makes it fail (CUDA_ERROR_INVALID_VALUE). */
static int encodes;
static uint64_t encodeFields[11][5];
CUresult cuTensorMapEncodeTiled(void *map, int dataType, uint32_t rank, void *address,
                                const uint64_t *dims, const uint64_t *strides, const uint32_t *box,
                                const uint32_t *elementStrides, int interleave, int swizzle, int l2,
                                int oobFill) {
  const char *fail = getenv("FAKE_CUDA_ENCODE_ERROR");
  if (fail && fail[0] == '1')
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  ADD(encodes, 1);
  encodeFields[0][0] = (uint64_t)dataType;
  encodeFields[1][0] = rank;
  encodeFields[2][0] = (uint64_t)(uintptr_t)address;
  for (uint32_t i = 0; i < rank && i < 5; ++i) {
    encodeFields[3][i] = dims[i];
    encodeFields[4][i] = i + 1 < rank ? strides[i] : 0;
    encodeFields[5][i] = box[i];
    encodeFields[6][i] = elementStrides[i];
  }
  encodeFields[7][0] = (uint64_t)interleave;
  encodeFields[8][0] = (uint64_t)swizzle;
  encodeFields[9][0] = (uint64_t)l2;
  encodeFields[10][0] = (uint64_t)oobFill;
  for (int i = 0; i < 128; ++i)
    ((unsigned char *)map)[i] = (unsigned char)(i ^ dataType);
  return OK;
}
int fake_encode_count(void) { return __atomic_load_n(&encodes, __ATOMIC_RELAXED); }
uint64_t fake_encode_field(int which, int i) { return encodeFields[which][i]; }

/* What the stand-in itself costs per cuLaunchKernel (ns), for the host-time
 * benchmark to subtract: `n` calls from C with the last launch's values. */
double fake_replay_launches(long n) {
  void *params[64];
  for (int i = 0; i < numParamSizes; ++i)
    params[i] = &lastParams[i];
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long i = 0; i < n; ++i)
    cuLaunchKernel(lastFunction, lastGrid[0], lastGrid[1], lastGrid[2], lastBlock[0], lastBlock[1],
                   lastBlock[2], lastShared, (void *)(uintptr_t)lastStream, params, 0);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ADD(launches, -(int)n);
  return ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n;
}
CUresult cuStreamBeginCapture_v2(void *stream, int mode) {
  (void)mode;
  logGraphCall("begin");
  if (!stream)
    return 900; /* CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED */
  capturing = stream;
  captureInvalid = captured = 0;
  return OK;
}
CUresult cuStreamEndCapture(void *stream, void **graph) {
  logGraphCall("end");
  *graph = 0;
  if (!capturing || stream != capturing)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  capturing = 0;
  if (captureInvalid)
    return 901; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
  int *nodes = (int *)malloc(sizeof(int));
  *nodes = captured;
  *graph = nodes;
  ++liveGraphs;
  return OK;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long flags) {
  (void)flags;
  logGraphCall("instantiate");
  const char *fail = getenv("FAKE_CUDA_GRAPH_ERROR");
  if (fail && fail[0] == '1')
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  int *nodes = (int *)malloc(sizeof(int));
  *nodes = *(int *)graph;
  *exec = nodes;
  ++liveGraphs;
  return OK;
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  (void)stream;
  logGraphCall("launch");
  ADD(launches, *(int *)exec);
  return OK;
}
CUresult cuGraphExecDestroy(void *exec) {
  logGraphCall("destroy-exec");
  free(exec);
  --liveGraphs;
  return OK;
}
CUresult cuGraphDestroy(void *graph) {
  logGraphCall("destroy");
  free(graph);
  --liveGraphs;
  return OK;
}
CUresult cuMemAlloc_v2(uint64_t *p, size_t n) {
  *p = (uint64_t)(uintptr_t)malloc(n);
  return OK;
}
CUresult cuMemFree_v2(uint64_t p) {
  free((void *)(uintptr_t)p);
  return OK;
}
CUresult cuMemcpyHtoD_v2(uint64_t d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return OK;
}
CUresult cuMemcpyDtoH_v2(void *d, uint64_t s, size_t n) {
  memcpy(d, (void *)(uintptr_t)s, n);
  return OK;
}
CUresult cuMemsetD8_v2(uint64_t d, unsigned char b, size_t n) {
  memset((void *)(uintptr_t)d, b, n);
  return OK;
}
CUresult cuStreamCreate(void **s, unsigned f) {
  (void)f;
  *s = (void *)0x40;
  return OK;
}
CUresult cuStreamDestroy_v2(void *s) {
  (void)s;
  return OK;
}
CUresult cuStreamSynchronize(void *s) {
  (void)s;
  return OK;
}
CUresult cuEventCreate(void **e, unsigned f) {
  (void)f;
  *e = (void *)0x50;
  return OK;
}
CUresult cuEventRecord(void *e, void *s) {
  (void)e;
  (void)s;
  return OK;
}
CUresult cuEventSynchronize(void *e) {
  (void)e;
  return OK;
}
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a;
  (void)b;
  *ms = 1;
  return OK;
}
CUresult cuEventDestroy_v2(void *e) {
  (void)e;
  return OK;
}
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == 218   ? "CUDA_ERROR_INVALID_PTX"
       : r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS"
       : r == 1   ? "CUDA_ERROR_INVALID_VALUE"
       : r == 900 ? "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"
       : r == 901 ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
                  : "CUDA_ERROR";
  return OK;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  (void)r;
  *s = "fake driver error";
  return OK;
}
/* The PTX -> cubin link: the "cubin" is the PTX itself. */
/* Per thread: tk's compile threads link at once. */
static __thread const char *linked;
static __thread size_t linkedSize;
CUresult cuLinkCreate_v2(unsigned n, int *o, void **v, void **state) {
  (void)n, (void)o, (void)v;
  *state = (void *)0x60;
  return OK;
}
CUresult cuLinkAddData_v2(void *st, int type, void *data, size_t size, const char *name, unsigned n,
                          int *o, void **v) {
  (void)st, (void)type, (void)name, (void)n, (void)o, (void)v;
  linked = (const char *)data;
  linkedSize = size;
  return OK;
}
CUresult cuLinkComplete(void *st, void **cubin, size_t *size) {
  (void)st;
  *cubin = (void *)linked;
  *size = linkedSize;
  return OK;
}
CUresult cuLinkDestroy(void *st) {
  (void)st;
  return OK;
}
