//! `CUMOCK_FAULT`: calls made to fail on purpose, one grammar for the mock driver and the
//! runtime. Specs are separated by commas; each is
//!
//! - `FUNC:N:ERROR`: the Nth call of FUNC fails (counted from 1);
//! - `FUNC:every=K:ERROR`: every Kth call;
//! - `FUNC:rate=P:seed=S:ERROR`: each call with probability P, drawn from seed S (the
//!   same seed fails the same calls every run; `seed=` may be left out: 1).
//!
//! FUNC is a function's name, or `*` for every driver function. ERROR is a name of the
//! layer's error type: a `CUresult` for a driver function (`CUDA_ERROR_OUT_OF_MEMORY`), a
//! `cudaError_t` for a runtime one (`cudaErrorMemoryAllocation`). A spec belongs to the
//! runtime when FUNC starts with `cuda` or `__cuda`, to the driver otherwise; each library
//! takes its own and leaves the other's alone.

/// Whose function a spec names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// The driver API, `libcuda.so.1`: `cu...`, and `*`.
    Driver,
    /// The runtime API, `libcudart.so`: `cuda...`, `__cuda...`.
    Runtime,
}

/// When a planned fault hits.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum When {
    Nth(u64),
    Every(u64),
    Rate { probability: f64, seed: u64 },
}

/// One spec as written, its error still a name (which names are valid is the layer's
/// business).
#[derive(Debug, Clone, PartialEq)]
pub struct FaultSpec {
    pub function: String,
    pub when: When,
    pub error: String,
}

const EXPECTED: &str = "expected FUNC:N:ERROR, FUNC:every=K:ERROR or FUNC:rate=P:seed=S:ERROR";

impl FaultSpec {
    pub fn parse(spec: &str) -> Result<Self, String> {
        let parts: Vec<&str> = spec.split(':').map(str::trim).collect();
        let [function, conditions @ .., error] = &parts[..] else {
            return Err(EXPECTED.into());
        };
        if conditions.is_empty() || function.is_empty() || error.is_empty() {
            return Err(EXPECTED.into());
        }
        let number = |what: &str, v: &str| -> Result<u64, String> {
            match v.parse::<u64>() {
                Ok(0) | Err(_) => Err(format!("{what}{v} is not a call number (counted from 1)")),
                Ok(n) => Ok(n),
            }
        };
        let (mut when, mut rate, mut seed) = (None, None, None);
        for c in conditions {
            if let Some(v) = c.strip_prefix("every=") {
                when = Some(When::Every(number("every=", v)?));
            } else if let Some(v) = c.strip_prefix("rate=") {
                let p: f64 = v.parse().map_err(|_| format!("rate={v} is not a number"))?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(format!("rate={v} is not between 0 and 1"));
                }
                rate = Some(p);
            } else if let Some(v) = c.strip_prefix("seed=") {
                seed = Some(
                    v.parse::<u64>()
                        .map_err(|_| format!("seed={v} is not a number"))?,
                );
            } else {
                when = Some(When::Nth(number("", c)?));
            }
        }
        let when = match (when, rate) {
            (Some(_), Some(_)) => {
                return Err(format!("a call number and rate= both given; {EXPECTED}"))
            }
            (None, Some(probability)) => When::Rate {
                probability,
                seed: seed.unwrap_or(1),
            },
            (Some(w), None) if seed.is_none() => w,
            (Some(_), None) => return Err("seed= goes with rate=".into()),
            (None, None) => {
                return Err(format!("no call number, every= or rate= given; {EXPECTED}"))
            }
        };
        Ok(Self {
            function: function.to_string(),
            when,
            error: error.to_string(),
        })
    }

    pub fn layer(&self) -> Layer {
        if self.function.starts_with("cuda") || self.function.starts_with("__cuda") {
            Layer::Runtime
        } else {
            Layer::Driver
        }
    }
}

/// Every spec of a `CUMOCK_FAULT` value, each as written and as parsed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FaultSpecs(Vec<(String, Result<FaultSpec, String>)>);

impl FaultSpecs {
    pub fn parse(all: &str) -> Self {
        Self(
            all.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_owned(), FaultSpec::parse(s)))
                .collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The plans of `layer`'s functions, their errors resolved by `code_of` (`kind` names
    /// the error type in messages); the first bad spec of the layer is an error (then the
    /// layer injects none). A spec that does not parse at all counts for the layer its
    /// function's name suggests.
    pub fn plans<C: Copy>(
        &self,
        layer: Layer,
        code_of: impl Fn(&str) -> Option<C>,
        kind: &str,
    ) -> Result<FaultPlans<C>, String> {
        let mut plans = Vec::new();
        for (text, spec) in &self.0 {
            let spec = match spec {
                Ok(s) if s.layer() != layer => continue,
                Ok(s) => s,
                Err(_) if layer_of_text(text) != layer => continue,
                Err(e) => return Err(format!("{text}: {e}")),
            };
            let code = code_of(&spec.error)
                .ok_or_else(|| format!("{text}: {} is not a {kind} name", spec.error))?;
            let rng = match spec.when {
                When::Rate { seed, .. } => seed.max(1),
                _ => 1,
            };
            plans.push(FaultPlan {
                function: spec.function.clone(),
                when: spec.when,
                code,
                calls: 0,
                rng,
            });
        }
        Ok(FaultPlans(plans))
    }
}

fn layer_of_text(text: &str) -> Layer {
    let t = text.trim_start();
    if t.starts_with("cuda") || t.starts_with("__cuda") {
        Layer::Runtime
    } else {
        Layer::Driver
    }
}

/// A planned failure with its count of calls so far.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlan<C> {
    function: String,
    when: When,
    code: C,
    calls: u64,
    rng: u64,
}

impl<C: Copy> FaultPlan<C> {
    /// Counts a call of `name` if it is this plan's function; the code to fail it with
    /// if the plan says this call fails.
    pub fn hit(&mut self, name: &str) -> Option<C> {
        if self.function != "*" && self.function != name {
            return None;
        }
        self.calls += 1;
        let fail = match self.when {
            When::Nth(n) => self.calls == n,
            When::Every(k) => self.calls % k == 0,
            When::Rate { probability, .. } => {
                // xorshift64: reproducible from the seed, no dependency needed for it.
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                ((self.rng >> 11) as f64 / (1u64 << 53) as f64) < probability
            }
        };
        fail.then_some(self.code)
    }
}

/// A layer's plans.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultPlans<C>(Vec<FaultPlan<C>>);

impl<C> Default for FaultPlans<C> {
    /// No planned failure.
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<C: Copy> FaultPlans<C> {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Every plan counts the call, so that each one's numbering is its own function's;
    /// where several hit, the last one's code.
    pub fn hit(&mut self, name: &str) -> Option<C> {
        self.0.iter_mut().fold(None, |hit, p| p.hit(name).or(hit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver_code(name: &str) -> Option<u32> {
        match name {
            "CUDA_ERROR_OUT_OF_MEMORY" => Some(2),
            "CUDA_ERROR_UNKNOWN" => Some(999),
            "CUDA_ERROR_NOT_SUPPORTED" => Some(801),
            _ => None,
        }
    }

    fn runtime_code(name: &str) -> Option<i32> {
        match name {
            "cudaErrorMemoryAllocation" => Some(2),
            "cudaErrorNotReady" => Some(600),
            _ => None,
        }
    }

    fn driver(all: &str) -> Result<FaultPlans<u32>, String> {
        FaultSpecs::parse(all).plans(Layer::Driver, driver_code, "CUresult")
    }

    fn runtime(all: &str) -> Result<FaultPlans<i32>, String> {
        FaultSpecs::parse(all).plans(Layer::Runtime, runtime_code, "cudaError_t")
    }

    #[test]
    fn nth_call_fails() {
        let mut p = driver("cuMemCreate:3:CUDA_ERROR_OUT_OF_MEMORY").unwrap();
        let hits: Vec<_> = (0..5).map(|_| p.hit("cuMemCreate")).collect();
        assert_eq!(hits, vec![None, None, Some(2), None, None]);
        assert_eq!(p.hit("cuMemMap"), None);
    }

    #[test]
    fn every_kth_call_fails() {
        let mut f = runtime("cudaStreamCreate:every=2:cudaErrorNotReady").unwrap();
        let hits: Vec<_> = (0..4)
            .map(|_| f.hit("cudaStreamCreate").is_some())
            .collect();
        assert_eq!(hits, [false, true, false, true]);
    }

    #[test]
    fn rate_is_reproducible_from_the_seed() {
        let run = || {
            let mut p = driver("*:rate=0.25:seed=7:CUDA_ERROR_UNKNOWN").unwrap();
            (0..1000).filter(|_| p.hit("cuMemMap").is_some()).count()
        };
        let n = run();
        assert_eq!(n, run());
        assert!((150..350).contains(&n), "{n} of 1000 at rate 0.25");
    }

    #[test]
    fn each_layer_takes_its_own_specs() {
        let all = "cuMemCreate:1:CUDA_ERROR_OUT_OF_MEMORY, cudaMalloc:3:cudaErrorMemoryAllocation";
        let mut r = runtime(all).unwrap();
        let hits: Vec<_> = (0..4).map(|_| r.hit("cudaMalloc")).collect();
        assert_eq!(hits, [None, None, Some(2), None]);
        assert_eq!(r.hit("cuMemCreate"), None);
        let mut d = driver(all).unwrap();
        assert_eq!(d.hit("cuMemCreate"), Some(2));
        assert_eq!(d.hit("cudaMalloc"), None);
        // A bad spec of the other layer is the other's to report.
        assert!(driver("cudaMalloc:0:x, cuMemMap:1:CUDA_ERROR_UNKNOWN").is_ok());
        assert!(runtime("cuMemMap:x, cudaMalloc:1:cudaErrorNotReady").is_ok());
        // The runtime's functions take every spelling the driver's do.
        let mut r = runtime("cudaMalloc:rate=1:seed=3:cudaErrorMemoryAllocation").unwrap();
        assert_eq!(r.hit("cudaMalloc"), Some(2));
        let mut r = runtime("__cudaRegisterFatBinary:1:cudaErrorNotReady").unwrap();
        assert_eq!(r.hit("__cudaRegisterFatBinary"), Some(600));
        assert!(driver("__cudaRegisterFatBinary:1:cudaErrorNotReady").is_ok());
        let mut d = driver("cuIpcGetMemHandle:1:CUDA_ERROR_NOT_SUPPORTED").unwrap();
        assert_eq!(d.hit("cuIpcGetMemHandle"), Some(801));
    }

    #[test]
    fn every_plan_counts_every_call_of_its_function() {
        let mut d =
            driver("cuMemMap:1:CUDA_ERROR_UNKNOWN,cuMemMap:2:CUDA_ERROR_OUT_OF_MEMORY").unwrap();
        assert_eq!(d.hit("cuMemMap"), Some(999));
        assert_eq!(d.hit("cuMemMap"), Some(2));
    }

    #[test]
    fn bad_specs_say_why() {
        assert!(driver("cuMemCreate").unwrap_err().contains("expected"));
        assert!(driver("cuMemCreate:1:NOPE").unwrap_err().contains("NOPE"));
        assert!(driver("cuMemCreate:0:CUDA_ERROR_UNKNOWN")
            .unwrap_err()
            .contains("counted from 1"));
        assert!(driver("x:rate=2:CUDA_ERROR_UNKNOWN").is_err());
        assert!(driver("x:3:seed=2:CUDA_ERROR_UNKNOWN").is_err());
        assert!(runtime("cudaMalloc:0:cudaErrorMemoryAllocation")
            .unwrap_err()
            .contains("counted from 1"));
        assert!(runtime("cudaMalloc:1:CUDA_ERROR_OUT_OF_MEMORY")
            .unwrap_err()
            .contains("not a cudaError_t"));
        assert!(runtime("cudaMalloc:1").unwrap_err().contains("expected"));
    }
}
