/* A stand-in for ROCm's libamdhip64.so that tests tk's HIP runtime layer
 * (driver/HipDriver.h) and the amdgcn launch path on a machine with no AMD
 * GPU and no ROCm. Every entry point HipDriver looks up exists; nothing runs
 * on a GPU. Device memory is host memory (hipMalloc is calloc, the copies
 * are memcpy), so data round-trips; a launch records what it was given, as
 * the real runtime would lay it out, for the test to read back:
 *
 *   cc -shared -fPIC -Wl,-soname,libamdhip64.so -o libamdhip64.so HipDriverFake.c
 *   HipDriver::open({path}, error)                 // a driver of its own, or
 *   dlopen(path, RTLD_NOW | RTLD_GLOBAL)           // before tk looks for "libamdhip64.so"
 *   fake_hip_set_kernarg_layout(offsets, sizes, n) // the explicit .args a launch reads
 *   ... launch ...
 *   fake_hip_last_kernarg(buffer, size)            // the kernarg bytes the launch wrote
 *   fake_hip_last_grid(0), fake_hip_last_block(0), fake_hip_last_used_extra()
 *   fake_hip_launches_with_threads(256)            // launches on workgroups of 256 threads
 *   fake_hip_event_records(), fake_hip_event_elapsed_times(), fake_hip_live_events()
 *
 * The kernarg segment: with kernelParams, argument i's `size` bytes are
 * copied from kernelParams[i] to its `offset`, as HIP copies each explicit
 * argument by the code object's `.args`; with `extra`, the markers must be
 * HIP's (HIP_LAUNCH_PARAM_BUFFER_POINTER 1, _SIZE 2, _END 3) and the buffer
 * is copied whole. Passing both, or markers that are not HIP's, is
 * hipErrorInvalidValue, as in HIP.
 *
 * Knobs (environment, read at each call): FAKE_HIP_DEVICES (devices, 1),
 * FAKE_HIP_INIT_ERROR (hipInit's error code), FAKE_HIP_LOAD_ERROR
 * (hipModuleLoadData's error code), FAKE_HIP_LAUNCH_ERROR
 * (hipModuleLaunchKernel's), FAKE_HIP_MAX_THREADS (hipFuncGetAttribute's
 * most threads per workgroup, 1024). Built with -DFAKE_HIP_OLD it lacks
 * hipModuleLaunchKernel: a runtime too old for tk. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int hipError_t;
enum {
  hipSuccess = 0,
  hipErrorInvalidValue = 1,
  hipErrorOutOfMemory = 2,
  hipErrorNoDevice = 100,
  hipErrorInvalidDevice = 101,
  hipErrorInvalidImage = 200,
  hipErrorInvalidHandle = 400,
  hipErrorNotFound = 500,
  hipErrorLaunchFailure = 719,
};

#define ADD(counter, n) __atomic_fetch_add(&(counter), (n), __ATOMIC_RELAXED)
#define LOAD(counter) __atomic_load_n(&(counter), __ATOMIC_RELAXED)

static int envInt(const char *name, int otherwise) {
  const char *v = getenv(name);
  return v && *v ? atoi(v) : otherwise;
}

/* hipGetErrorName / hipGetErrorString: the real runtime's texts
 * (clr's hip_error.cpp) for the codes this stand-in returns. */
const char *hipGetErrorName(hipError_t e) {
  switch (e) {
  case hipSuccess:
    return "hipSuccess";
  case hipErrorInvalidValue:
    return "hipErrorInvalidValue";
  case hipErrorOutOfMemory:
    return "hipErrorOutOfMemory";
  case hipErrorNoDevice:
    return "hipErrorNoDevice";
  case hipErrorInvalidDevice:
    return "hipErrorInvalidDevice";
  case hipErrorInvalidImage:
    return "hipErrorInvalidImage";
  case hipErrorInvalidHandle:
    return "hipErrorInvalidHandle";
  case hipErrorNotFound:
    return "hipErrorNotFound";
  case hipErrorLaunchFailure:
    return "hipErrorLaunchFailure";
  default:
    return "hipErrorUnknown";
  }
}
const char *hipGetErrorString(hipError_t e) {
  switch (e) {
  case hipSuccess:
    return "no error";
  case hipErrorInvalidValue:
    return "invalid argument";
  case hipErrorOutOfMemory:
    return "out of memory";
  case hipErrorNoDevice:
    return "no ROCm-capable device is detected";
  case hipErrorInvalidDevice:
    return "invalid device ordinal";
  case hipErrorInvalidImage:
    return "device kernel image is invalid";
  case hipErrorInvalidHandle:
    return "invalid resource handle";
  case hipErrorNotFound:
    return "named symbol not found";
  case hipErrorLaunchFailure:
    return "unspecified launch failure";
  default:
    return "unknown error";
  }
}

/* Device */

static __thread int currentDevice; /* HIP's current device is per thread */

hipError_t hipInit(unsigned flags) {
  (void)flags;
  return envInt("FAKE_HIP_INIT_ERROR", hipSuccess);
}
hipError_t hipGetDeviceCount(int *n) {
  *n = envInt("FAKE_HIP_DEVICES", 1);
  return *n ? hipSuccess : hipErrorNoDevice;
}
hipError_t hipDeviceGet(int *device, int ordinal) {
  if (ordinal < 0 || ordinal >= envInt("FAKE_HIP_DEVICES", 1))
    return hipErrorInvalidDevice;
  *device = ordinal;
  return hipSuccess;
}
hipError_t hipDeviceGetName(char *name, int len, int device) {
  (void)device;
  strncpy(name, "Fake AMD Instinct MI300X", (size_t)len);
  return hipSuccess;
}
hipError_t hipDeviceGetAttribute(int *v, int attribute, int device) {
  (void)device;
  switch (attribute) {
  case 56:
    *v = 1024;
    return hipSuccess; /* hipDeviceAttributeMaxThreadsPerBlock */
  case 63:
    *v = 304;
    return hipSuccess; /* hipDeviceAttributeMultiprocessorCount */
  case 74:
    *v = 65536;
    return hipSuccess; /* hipDeviceAttributeMaxSharedMemoryPerBlock */
  case 87:
    *v = 64;
    return hipSuccess; /* hipDeviceAttributeWarpSize */
  default:
    return hipErrorInvalidValue;
  }
}
hipError_t hipSetDevice(int device) {
  if (device < 0 || device >= envInt("FAKE_HIP_DEVICES", 1))
    return hipErrorInvalidDevice;
  currentDevice = device;
  return hipSuccess;
}
hipError_t hipGetDevice(int *device) {
  *device = currentDevice;
  return hipSuccess;
}
/* A thread whose current device is not 0 (the tests set -1 through
 * fake_hip_set_thread_device) is one tk forgot to select device 0 on. */
void fake_hip_set_thread_device(int device) { currentDevice = device; }
static int synchronizes;
hipError_t hipDeviceSynchronize(void) {
  ADD(synchronizes, 1);
  return hipSuccess;
}
int fake_hip_synchronizes(void) { return LOAD(synchronizes); }
hipError_t hipRuntimeGetVersion(int *v) {
  *v = 60241134; /* ROCm 6.2's HIP_VERSION */
  return hipSuccess;
}

/* Modules: a copy of the code object; its one function is looked up by
 * its kernel descriptor's symbol name (NAME.kd) in the ELF's string table. */

typedef struct {
  unsigned char *image;
  size_t bytes;
} FakeModule;
typedef struct {
  FakeModule *module;
  char name[256];
} FakeFunction;
static int loadedModules, moduleLoads, moduleUnloads, unloadsOffDevice;
static __thread size_t lastImageBytes;

static uint64_t le(const unsigned char *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; --i)
    v = (v << 8) | p[i];
  return v;
}
/* An ELF64's size from its header: the end of its section or program
 * header table, whichever is last (ld.lld writes the section headers last). */
static size_t elfBytes(const unsigned char *e) {
  uint64_t sh = le(e + 40, 8) + le(e + 58, 2) * le(e + 60, 2);
  uint64_t ph = le(e + 32, 8) + le(e + 54, 2) * le(e + 56, 2);
  uint64_t end = sh > ph ? sh : ph;
  return end > (64u << 20) ? 0 : (size_t)end;
}

hipError_t hipModuleLoadData(void **module, const void *image) {
  const unsigned char *e = (const unsigned char *)image;
  int injected = envInt("FAKE_HIP_LOAD_ERROR", 0);
  if (injected)
    return injected;
  if (!e || memcmp(e, "\177ELF", 4) != 0 || e[4] != 2)
    return hipErrorInvalidImage;
  size_t bytes = elfBytes(e);
  if (bytes < 64)
    return hipErrorInvalidImage;
  FakeModule *m = (FakeModule *)malloc(sizeof(FakeModule));
  m->image = (unsigned char *)malloc(bytes);
  memcpy(m->image, e, bytes);
  m->bytes = bytes;
  lastImageBytes = bytes;
  ADD(loadedModules, 1);
  ADD(moduleLoads, 1);
  *module = m;
  return hipSuccess;
}
hipError_t hipModuleUnload(void *module) {
  FakeModule *m = (FakeModule *)module;
  if (!m)
    return hipErrorInvalidHandle;
  if (currentDevice != 0)
    ADD(unloadsOffDevice, 1);
  free(m->image);
  free(m);
  ADD(loadedModules, -1);
  ADD(moduleUnloads, 1);
  return hipSuccess;
}
hipError_t hipModuleGetFunction(void **function, void *module, const char *name) {
  FakeModule *m = (FakeModule *)module;
  char symbol[300];
  size_t n = strlen(name);
  if (!m || n > 250)
    return hipErrorInvalidValue;
  memcpy(symbol, name, n);
  memcpy(symbol + n, ".kd", 4); /* with its NUL: a whole string of the table */
  for (size_t i = 0; i + n + 4 <= m->bytes; ++i)
    if ((i == 0 || m->image[i - 1] == 0) && memcmp(m->image + i, symbol, n + 4) == 0) {
      FakeFunction *f = (FakeFunction *)malloc(sizeof(FakeFunction));
      f->module = m;
      strcpy(f->name, name);
      *function = f;
      return hipSuccess;
    }
  return hipErrorNotFound;
}
hipError_t hipFuncGetAttribute(int *value, int attribute, void *function) {
  if (!function)
    return hipErrorInvalidHandle;
  switch (attribute) {
  case 0:
    *value = envInt("FAKE_HIP_MAX_THREADS", 1024);
    return hipSuccess; /* MAX_THREADS */
  case 1:
    *value = 0;
    return hipSuccess; /* SHARED_SIZE_BYTES */
  case 3:
    *value = 0;
    return hipSuccess; /* LOCAL_SIZE_BYTES */
  case 4:
    *value = 34;
    return hipSuccess; /* NUM_REGS */
  default:
    return hipErrorInvalidValue;
  }
}
int fake_hip_loaded_modules(void) { return LOAD(loadedModules); }
int fake_hip_module_loads(void) { return LOAD(moduleLoads); }
int fake_hip_module_unloads(void) { return LOAD(moduleUnloads); }
int fake_hip_unloads_off_device(void) { return LOAD(unloadsOffDevice); }
size_t fake_hip_last_image_bytes(void) { return lastImageBytes; }

/* Launches */

#define MAX_ARGS 256
#define MAX_KERNARG 4096
static unsigned layoutOffsets[MAX_ARGS], layoutSizes[MAX_ARGS];
static int layoutCount;
static int launches;
static int launchesByThreads[1025]; /* by threads per workgroup */
static __thread unsigned lastGrid[3], lastBlock[3], lastShared;
static __thread uint64_t lastStream;
static __thread unsigned char lastKernarg[MAX_KERNARG];
static __thread size_t lastKernargBytes;
static __thread int lastUsedExtra;
static __thread char lastFunctionName[256];

void fake_hip_set_kernarg_layout(const unsigned *offsets, const unsigned *sizes, int n) {
  layoutCount = n > MAX_ARGS ? MAX_ARGS : n;
  for (int i = 0; i < layoutCount; ++i) {
    layoutOffsets[i] = offsets[i];
    layoutSizes[i] = sizes[i];
  }
}

#ifndef FAKE_HIP_OLD
hipError_t hipModuleLaunchKernel(void *function, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream,
                                 void **kernelParams, void **extra) {
  FakeFunction *f = (FakeFunction *)function;
  if (!f)
    return hipErrorInvalidImage;
  if (kernelParams && extra)
    return hipErrorInvalidValue;
  if (!gx || !gy || !gz || !bx || !by || !bz || (uint64_t)bx * by * bz > 1024)
    return hipErrorInvalidValue;
  int injected = envInt("FAKE_HIP_LAUNCH_ERROR", 0);
  if (injected)
    return injected;
  memset(lastKernarg, 0, sizeof(lastKernarg));
  lastKernargBytes = 0;
  if (extra) {
    if (extra[0] != (void *)1 || extra[2] != (void *)2 || extra[4] != (void *)3)
      return hipErrorInvalidValue;
    size_t bytes = *(const size_t *)extra[3];
    if (bytes > MAX_KERNARG)
      return hipErrorInvalidValue;
    memcpy(lastKernarg, extra[1], bytes);
    lastKernargBytes = bytes;
  } else {
    for (int i = 0; i < layoutCount; ++i) {
      if (!kernelParams || layoutOffsets[i] + layoutSizes[i] > MAX_KERNARG)
        return hipErrorInvalidValue;
      memcpy(lastKernarg + layoutOffsets[i], kernelParams[i], layoutSizes[i]);
      if (layoutOffsets[i] + layoutSizes[i] > lastKernargBytes)
        lastKernargBytes = layoutOffsets[i] + layoutSizes[i];
    }
  }
  lastUsedExtra = extra != NULL;
  lastGrid[0] = gx, lastGrid[1] = gy, lastGrid[2] = gz;
  lastBlock[0] = bx, lastBlock[1] = by, lastBlock[2] = bz;
  lastShared = shared;
  lastStream = (uint64_t)(uintptr_t)stream;
  strcpy(lastFunctionName, f->name);
  ADD(launches, 1);
  ADD(launchesByThreads[bx * by * bz], 1);
  return hipSuccess;
}
#endif

int fake_hip_launch_count(void) { return LOAD(launches); }
int fake_hip_launches_with_threads(unsigned threads) {
  return threads <= 1024 ? LOAD(launchesByThreads[threads]) : 0;
}
unsigned fake_hip_last_grid(int i) { return lastGrid[i]; }
unsigned fake_hip_last_block(int i) { return lastBlock[i]; }
unsigned fake_hip_last_shared(void) { return lastShared; }
uint64_t fake_hip_last_stream(void) { return lastStream; }
int fake_hip_last_used_extra(void) { return lastUsedExtra; }
const char *fake_hip_last_function(void) { return lastFunctionName; }
/* Copies up to `max` bytes of the last kernarg segment; returns its size. */
size_t fake_hip_last_kernarg(unsigned char *out, size_t max) {
  memcpy(out, lastKernarg, max < lastKernargBytes ? max : lastKernargBytes);
  return lastKernargBytes;
}

/* Memory: host memory standing in for the device's. */

static int liveAllocations;
hipError_t hipMalloc(void **p, size_t bytes) {
  if (bytes > ((size_t)1 << 34))
    return hipErrorOutOfMemory;
  *p = calloc(1, bytes ? bytes : 1);
  if (!*p)
    return hipErrorOutOfMemory;
  ADD(liveAllocations, 1);
  return hipSuccess;
}
hipError_t hipFree(void *p) {
  if (p) {
    free(p);
    ADD(liveAllocations, -1);
  }
  return hipSuccess;
}
int fake_hip_live_allocations(void) { return LOAD(liveAllocations); }
hipError_t hipMemcpyHtoD(void *dst, void *src, size_t bytes) {
  if (!dst || !src)
    return hipErrorInvalidValue;
  memcpy(dst, src, bytes);
  return hipSuccess;
}
hipError_t hipMemcpyDtoH(void *dst, void *src, size_t bytes) {
  if (!dst || !src)
    return hipErrorInvalidValue;
  memcpy(dst, src, bytes);
  return hipSuccess;
}
hipError_t hipMemset(void *dst, int value, size_t bytes) {
  if (!dst)
    return hipErrorInvalidValue;
  memset(dst, value, bytes);
  return hipSuccess;
}

/* Streams and events */

static int liveStreams;
hipError_t hipStreamCreate(void **stream) {
  *stream = malloc(16);
  ADD(liveStreams, 1);
  return hipSuccess;
}
hipError_t hipStreamDestroy(void *stream) {
  if (!stream)
    return hipErrorInvalidHandle;
  free(stream);
  ADD(liveStreams, -1);
  return hipSuccess;
}
static int streamSynchronizes;
hipError_t hipStreamSynchronize(void *stream) {
  (void)stream;
  ADD(streamSynchronizes, 1);
  return hipSuccess;
}
int fake_hip_live_streams(void) { return LOAD(liveStreams); }
int fake_hip_stream_synchronizes(void) { return LOAD(streamSynchronizes); }

typedef struct {
  double ms; /* when recorded; < 0 before */
} FakeEvent;
static int liveEvents, eventRecords, eventElapsedTimes;
hipError_t hipEventCreate(void **event) {
  FakeEvent *e = (FakeEvent *)malloc(sizeof(FakeEvent));
  e->ms = -1;
  *event = e;
  ADD(liveEvents, 1);
  return hipSuccess;
}
hipError_t hipEventRecord(void *event, void *stream) {
  (void)stream;
  struct timespec t;
  if (!event)
    return hipErrorInvalidHandle;
  clock_gettime(CLOCK_MONOTONIC, &t);
  ((FakeEvent *)event)->ms = t.tv_sec * 1e3 + t.tv_nsec / 1e6;
  ADD(eventRecords, 1);
  return hipSuccess;
}
hipError_t hipEventSynchronize(void *event) { return event ? hipSuccess : hipErrorInvalidHandle; }
hipError_t hipEventElapsedTime(float *ms, void *start, void *stop) {
  FakeEvent *a = (FakeEvent *)start, *b = (FakeEvent *)stop;
  if (!a || !b || a->ms < 0 || b->ms < 0)
    return hipErrorInvalidHandle; /* HIP's answer for an event never recorded */
  *ms = (float)(b->ms - a->ms);
  ADD(eventElapsedTimes, 1);
  return hipSuccess;
}
hipError_t hipEventDestroy(void *event) {
  if (!event)
    return hipErrorInvalidHandle;
  free(event);
  ADD(liveEvents, -1);
  return hipSuccess;
}
int fake_hip_live_events(void) { return LOAD(liveEvents); }
int fake_hip_event_records(void) { return LOAD(eventRecords); }
int fake_hip_event_elapsed_times(void) { return LOAD(eventElapsedTimes); }
