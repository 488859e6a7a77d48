// _C.Autotuner: runtime/Autotuner.h's tune::Tuner for python/tk/autotuner.py,
// and _C.bench_gpu, its CUDA-event benchmark of a Python launch callable.
//
//   t = _C.Autotuner("softmax", identity_hash, [({"BLOCK": 128}, 4, 3), ...],
//                    device_name, cache_dir, disk_cache)
//   best, trials, seconds, from_disk = t.tune(key, bench, keep, progress, check)
//       bench(i) -> milliseconds, or (milliseconds, local bytes per thread)
//       (raising marks config i unusable, with the exception's text as the
//       reason); keep: the indices that survived prune_configs_by (None:
//       all); progress(dict) after each config; check(i, reference) -> ''
//       when config i's output agrees with the reference's, else the
//       difference (None: outputs are not compared)
//   t.lookup(key) -> the same tuple, or None (memory, then disk)
//   ms = _C.bench_gpu(launch, before_each, warmup_ms, rep_ms)
//   n = _C.compile_threads(jobs)   (the tuner's compile pool size)
//
// Failures come back as Python exceptions: RuntimeError with the tuner's
// message (every config's reason) when no config is usable.
#include "Autotune.h"

#include "runtime/Autotuner.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace tk {

namespace {

ConstValue toConst(const py::handle &v) {
  if (py::isinstance<py::bool_>(v))
    return ConstValue::ofBool(v.cast<bool>());
  if (py::isinstance<py::int_>(v))
    return ConstValue::ofInt(v.cast<int64_t>());
  if (py::isinstance<py::float_>(v))
    return ConstValue::ofFloat(v.cast<double>());
  if (v.is_none())
    return ConstValue::none();
  if (py::isinstance<py::str>(v))
    return ConstValue::ofString(v.cast<std::string>());
  return ConstValue::ofString(py::repr(v).cast<std::string>());
}

py::tuple resultTuple(const tune::Result &r) {
  py::list trials;
  for (const tune::Trial &t : r.trials) {
    py::dict d;
    d["usable"] = t.usable;
    d["pruned"] = t.pruned;
    d["ms"] = t.ms;
    d["reason"] = t.reason;
    d["rejected"] = t.rejected;
    d["note"] = t.note;
    d["spill_bytes"] = t.spillBytes;
    trials.append(d);
  }
  return py::make_tuple(r.best, trials, r.seconds, r.fromDisk);
}

class PyAutotuner {
public:
  PyAutotuner(const std::string &kernel, const std::string &identity, const py::list &configs,
              const std::string &device, const std::string &cacheDir, bool diskCache,
              bool rejectSpills) {
    std::vector<tune::Config> cs;
    for (const py::handle &c : configs) {
      auto t = c.cast<py::tuple>();
      tune::Config config;
      for (const auto &[name, value] : t[0].cast<py::dict>())
        config.meta.emplace_back(name.cast<std::string>(), toConst(value));
      config.numWarps = t[1].cast<int>();
      config.numStages = t[2].cast<int>();
      cs.push_back(std::move(config));
    }
    tune::Options o;
    o.kernelName = kernel;
    o.identity = identity;
    o.deviceName = device;
    o.cacheDir = cacheDir;
    o.diskCache = diskCache;
    o.rejectSpills = rejectSpills;
    tuner_ = std::make_unique<tune::Tuner>(std::move(cs), o);
  }

  py::object lookup(const std::string &key) {
    const tune::Result *r = tuner_->lookup(key);
    return r ? py::object(resultTuple(*r)) : py::none();
  }

  py::tuple tune(const std::string &key, const py::function &bench, const py::object &keep,
                 const py::object &progress, const py::object &check) {
    if (!keep.is_none()) {
      std::vector<size_t> kept = keep.cast<std::vector<size_t>>();
      tuner_->setPrune(
          [kept](const std::vector<tune::Config> &, const std::string &) { return kept; });
    } else {
      tuner_->setPrune(nullptr);
    }
    if (!progress.is_none())
      tuner_->setProgress([progress](const tune::Progress &p) {
        py::dict d;
        d["kernel"] = p.kernel;
        d["key"] = p.key;
        d["done"] = p.done;
        d["total"] = p.total;
        d["best"] = p.best;
        d["best_ms"] = p.bestMs;
        d["best_config"] = p.bestConfig;
        d["elapsed"] = p.elapsedSeconds;
        d["finished"] = p.finished;
        d["from_cache"] = p.fromCache;
        d["reports"] = p.reports;
        progress(d);
      });
    else
      tuner_->setProgress(nullptr);
    // A Python exception from bench() is the config's failure reason; one
    // from the progress callback propagates, and the hooks are dropped on
    // the way out either way.
    struct Reset {
      tune::Tuner &t;
      ~Reset() {
        t.setPrune(nullptr);
        t.setProgress(nullptr);
        t.setCheck(nullptr);
      }
    } reset{*tuner_};
    if (!check.is_none())
      tuner_->setCheck([check](size_t i, size_t reference, std::string &difference) {
        try {
          difference = check(i, reference).cast<std::string>();
        } catch (py::error_already_set &e) {
          difference = e.what();
          return false;
        }
        return difference.empty();
      });
    else
      tuner_->setCheck(nullptr);
    auto benchFn = [&](size_t i) -> tune::Trial {
      try {
        py::object r = bench(i);
        if (py::isinstance<py::tuple>(r)) {
          py::tuple t = r.cast<py::tuple>();
          tune::Trial trial = tune::Trial::time(t[0].cast<double>());
          trial.spillBytes = t[1].cast<int64_t>();
          return trial;
        }
        return tune::Trial::time(r.cast<double>());
      } catch (py::error_already_set &e) {
        std::string what = e.what();
        return tune::Trial::failure(what);
      }
    };
    std::string error;
    const tune::Result *r = tuner_->tune(key, benchFn, error);
    if (!r)
      throw std::runtime_error(error);
    return resultTuple(*r);
  }

  std::string cachePath(const std::string &key) const { return tuner_->cachePath(key); }

private:
  std::unique_ptr<tune::Tuner> tuner_;
};

double benchGpu(const py::function &launch, const py::object &beforeEach, double warmupMs,
                double repMs) {
  std::string error;
  CudaDriver *driver = CudaDriver::get(error);
  if (!driver)
    throw std::runtime_error(error);
  auto call = [](const py::function &f, std::string &err) {
    try {
      f();
      return true;
    } catch (py::error_already_set &e) {
      err = e.what();
      return false;
    }
  };
  std::function<bool(std::string &)> before;
  if (!beforeEach.is_none()) {
    py::function f = beforeEach;
    before = [f, call](std::string &err) { return call(f, err); };
  }
  tune::BenchOptions o;
  o.warmupMs = warmupMs;
  o.repMs = repMs;
  tune::Trial t = tune::benchmarkWithEvents(
      *driver, nullptr, [&](std::string &err) { return call(launch, err); }, before, o);
  if (!t.usable)
    throw std::runtime_error(t.reason);
  return t.ms;
}

} // namespace

void bindAutotune(py::module_ &m) {
  py::class_<PyAutotuner>(m, "Autotuner")
      .def(py::init<const std::string &, const std::string &, const py::list &, const std::string &,
                    const std::string &, bool, bool>(),
           py::arg("kernel"), py::arg("identity"), py::arg("configs"), py::arg("device"),
           py::arg("cache_dir") = "", py::arg("disk_cache") = true,
           py::arg("reject_spills") = false)
      .def("lookup", &PyAutotuner::lookup, py::arg("key"))
      .def("tune", &PyAutotuner::tune, py::arg("key"), py::arg("bench"),
           py::arg("keep") = py::none(), py::arg("progress") = py::none(),
           py::arg("check") = py::none())
      .def("cache_path", &PyAutotuner::cachePath, py::arg("key"));
  m.def("bench_gpu", &benchGpu, py::arg("launch"), py::arg("before_each") = py::none(),
        py::arg("warmup_ms") = 25.0, py::arg("rep_ms") = 100.0,
        "Median milliseconds of launch() timed with CUDA events (see runtime/Autotuner.h).");
  m.def(
      "autotune_key",
      [](const std::vector<std::pair<std::string, std::string>> &values,
         const std::vector<std::pair<std::string, std::string>> &dtypes) {
        return tune::makeKey(values, dtypes);
      },
      py::arg("values"), py::arg("dtypes"));
  m.def("hash_text", &tune::hashText, py::arg("text"));
  m.def(
      "compile_threads", [](size_t jobs) { return tune::compileThreads(jobs); }, py::arg("jobs"),
      "Threads that compile `jobs` configs: TK_COMPILE_THREADS, else min(jobs, cores).");
  m.def("device_name", [] {
    std::string error;
    CudaDriver *driver = CudaDriver::get(error);
    return driver ? driver->deviceName() : std::string();
  });
  m.def(
      "device_capability",
      [] {
        std::string error;
        CudaDriver *driver = CudaDriver::get(error);
        return driver ? driver->computeCapability() : 0;
      },
      "Device 0's compute capability as major * 10 + minor (90 on an H100/H200); 0 without "
      "a GPU.");
}

} // namespace tk
