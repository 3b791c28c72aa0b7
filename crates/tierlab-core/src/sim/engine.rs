//! The replay loop. A trace is decoded once, in batches; each batch is split
//! into page references with dense page ids and handed to every policy
//! instance of the run (e.g. every policy x size cell of a sweep), in parallel
//! across instances when more than one thread is allowed. Each instance is a
//! `Instance<P, S>` monomorphised for its policy type `P`; the policy name is
//! resolved once, when the instance is built, and the per-batch call is the
//! only dynamic dispatch.

use super::accounting::{Accounting, DeviceRequest, Stats};
pub use super::decode::{fill_next_use, Decoder};
use super::object::ObjectSink;
use super::{RefBatch, Sink};
use crate::device::System;
use crate::error::{Error, Result};
use crate::policy::admission::Admitted;
use crate::policy::external::{External, Host};
use crate::policy::{
    object_mode_policies, visit_policy, Policy, PolicyCtx, PolicyDef, PolicySpec, PolicyVisitor,
    PREFETCH_FAR, PREFETCH_MID, PREFETCH_NEAR,
};
use crate::trace::{Event, RecordColumns, TraceReader};
use std::sync::mpsc;
use std::time::Instant;

mod budget;
use budget::check_future_room;
pub use budget::{available_memory, needs_future, FUTURE_BYTES_PER_REF};

/// One cell of a run: a policy with parameters at one memory size.
#[derive(Debug, Clone)]
pub struct InstanceSpec {
    pub policy: PolicySpec,
    /// Memory size in pages (in bytes in object-size mode).
    pub capacity: usize,
}

#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Worker threads across instances (1 = run instances one after another).
    pub threads: usize,
    /// Trace records decoded per batch.
    pub batch: usize,
    /// Keep every device request each instance issues (the after-cache trace).
    pub record_device_log: bool,
    /// Stop after this many page references (None: whole trace).
    pub limit: Option<u64>,
    /// Object-size mode: every record is one object of the size the trace gives
    /// (`Access::size`), capacities are in bytes, and only policies with an object-size
    /// variant (`PolicyDef::visit_object_mode`) run. Default false: page mode.
    pub object_sizes: bool,
    /// Further systems to price every instance under, besides the run's own: each may differ
    /// from it in device costs only (a config error otherwise). Since no policy sees device
    /// costs, its decisions are the same on each, so one replay gives every variant's result
    /// ([`InstanceResult::variant_stats`]) at the price of a few more additions per device
    /// request, where a replay per variant would repeat the whole run.
    pub variants: Vec<System>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            threads: 1,
            batch: 1 << 16,
            record_device_log: false,
            limit: None,
            object_sizes: false,
            variants: Vec::new(),
        }
    }
}

/// Progress reported after each batch.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    pub page_refs: u64,
    pub requests: u64,
}

/// Result of one instance.
#[derive(Debug, Clone)]
pub struct InstanceResult {
    pub policy: String,
    pub label: String,
    /// Resolved parameters (defaults filled in), as JSON.
    pub params: String,
    pub capacity: usize,
    pub stats: Stats,
    pub counters: Vec<(String, u64)>,
    pub resident_at_end: usize,
    /// CPU seconds this instance's thread spent in its policy (summed over batches): CPU time,
    /// not wall time, so that the reading and decoding threads, or other instances, sharing the
    /// cores do not count against the policy.
    pub policy_seconds: f64,
    pub device_log: Option<Vec<DeviceRequest>>,
    /// The stats priced under each of `RunOptions::variants`, in order (same counts as `stats`).
    pub variant_stats: Vec<Stats>,
}

/// Result of a run over one trace.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub results: Vec<InstanceResult>,
    pub page_refs: u64,
    pub requests: u64,
    pub events: u64,
    pub distinct_pages: u64,
    pub page_size: u32,
    pub app_names: Vec<String>,
    pub elapsed_s: f64,
    /// Whether the run was in object-size mode (`page_refs` then counts object requests and
    /// `distinct_pages` distinct objects).
    pub object_sizes: bool,
    /// Bytes requested: the sum of object sizes in object-size mode, `page_refs * page_size`
    /// in page mode.
    pub byte_accesses: u64,
}

/// A sink that can also be grown and finished (the engine's view of a sink).
pub trait EngineSink: Sink + Send + 'static {
    fn grow(&mut self, n: usize);
    fn into_parts(self) -> (Stats, Option<Vec<DeviceRequest>>);
    /// The stats priced under each pricing variant (`RunOptions::variants`); none by default.
    fn variant_stats(&self) -> Vec<Stats> {
        Vec::new()
    }
}

impl EngineSink for Accounting {
    fn grow(&mut self, n: usize) {
        Accounting::grow(self, n)
    }
    fn into_parts(self) -> (Stats, Option<Vec<DeviceRequest>>) {
        (self.priced(), self.log)
    }
    fn variant_stats(&self) -> Vec<Stats> {
        Accounting::variant_stats(self)
    }
}

impl<S: EngineSink> EngineSink for ObjectSink<S> {
    fn grow(&mut self, n: usize) {
        self.inner_mut().grow(n)
    }
    fn into_parts(self) -> (Stats, Option<Vec<DeviceRequest>>) {
        let (inner, write_counts) = self.into_inner();
        let (mut stats, log) = inner.into_parts();
        write_counts(&mut stats);
        (stats, log)
    }
    fn variant_stats(&self) -> Vec<Stats> {
        let mut all = self.inner().variant_stats();
        self.write_counts_into(&mut all);
        all
    }
}

/// CPU time of the calling thread, in seconds (wall time where the OS cannot tell).
fn thread_cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid out-pointer; CLOCK_THREAD_CPUTIME_ID exists on every unix
        // this builds for, and on failure `ts` stays zero and we fall back below.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    use std::sync::OnceLock;
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// A policy instance behind one virtual call per batch.
pub trait Runner: Send {
    fn grow(&mut self, n: usize);
    fn run(&mut self, refs: &RefBatch, events: &[(usize, Event)]);
    fn finish(self: Box<Self>) -> InstanceResult;
    /// An error that stopped the policy (see [`Policy::failed`]).
    fn failed(&mut self) -> Option<Error> {
        None
    }
    /// The capacity its result reports (the one asked for, when it was built at less).
    fn set_capacity(&mut self, _capacity: usize) {}
}

/// A policy instance and its sink.
pub struct Instance<P: Policy, S: EngineSink> {
    pub policy: P,
    pub sink: S,
    name: String,
    label: String,
    params: String,
    capacity: usize,
    seconds: f64,
}

impl<P: Policy, S: EngineSink> Instance<P, S> {
    /// The same instance around a policy made from this one (an admission policy in front).
    fn map_policy<Q: Policy>(self, wrap: impl FnOnce(P) -> Q) -> Instance<Q, S> {
        Instance {
            policy: wrap(self.policy),
            sink: self.sink,
            name: self.name,
            label: self.label,
            params: self.params,
            capacity: self.capacity,
            seconds: self.seconds,
        }
    }
}

impl<P: Policy, S: EngineSink> Runner for Instance<P, S> {
    fn grow(&mut self, n: usize) {
        self.policy.grow(n);
        self.sink.grow(n);
    }

    fn run(&mut self, refs: &RefBatch, events: &[(usize, Event)]) {
        let start = thread_cpu_seconds();
        let (policy, sink) = (&mut self.policy, &mut self.sink);
        if events.is_empty() {
            let ids = &refs.ids[..];
            let n = ids.len();
            // Asked once: a flag in a register, where `sink`'s own field would be reloaded
            // after every access (the policy holds `sink` mutably).
            let sink_prefetches = sink.prefetches();
            for i in 0..n {
                if i + PREFETCH_FAR < n {
                    policy.prefetch(ids[i + PREFETCH_NEAR], ids[i + PREFETCH_FAR]);
                    if P::PREFETCH_MID {
                        policy.prefetch_mid(ids[i + PREFETCH_MID]);
                    }
                    if P::PREFETCH_REFS {
                        policy.prefetch_ref(&refs.get(i + PREFETCH_FAR));
                    }
                    if sink_prefetches {
                        sink.prefetch(ids[i + PREFETCH_FAR]);
                    }
                }
                policy.access(&refs.get(i), sink);
            }
        } else {
            let mut ev = events.iter().peekable();
            for (i, r) in refs.iter().enumerate() {
                while let Some((_, e)) = ev.next_if(|(pos, _)| *pos <= i) {
                    sink.event(e);
                    policy.event(e, sink);
                }
                policy.access(&r, sink);
            }
            for (_, e) in ev {
                sink.event(e);
                policy.event(e, sink);
            }
        }
        self.seconds += thread_cpu_seconds() - start;
    }

    fn finish(self: Box<Self>) -> InstanceResult {
        let counters = self
            .policy
            .counters()
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        let resident_at_end = self.policy.resident();
        let variant_stats = self.sink.variant_stats();
        let (stats, device_log) = self.sink.into_parts();
        InstanceResult {
            policy: self.name,
            label: self.label,
            params: self.params,
            capacity: self.capacity,
            stats,
            counters,
            resident_at_end,
            policy_seconds: self.seconds,
            device_log,
            variant_stats,
        }
    }

    fn failed(&mut self) -> Option<Error> {
        self.policy.failed()
    }

    fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity;
    }
}

/// Builds `P` from `spec` (its admission policy, if any, wrapped around it) over `sink`.
struct Build<'a, S> {
    spec: &'a PolicySpec,
    ctx: &'a PolicyCtx,
    sink: S,
}

impl<S: EngineSink> PolicyVisitor for Build<'_, S> {
    type Out = Result<Box<dyn Runner>>;
    fn visit<P: PolicyDef>(self) -> Self::Out {
        let (bare, admission) = self.spec.split_admission()?;
        let cfg = bare.config::<P>()?;
        let policy = P::build(&cfg, self.ctx)?;
        let mut params = serde_json::to_value(&cfg).unwrap_or_default();
        if let (Some(a), serde_json::Value::Object(m)) = (&admission, &mut params) {
            m.insert("admit".into(), a.to_json());
        }
        let params = params.to_string();
        let label = self.spec.label();
        let (name, capacity) = (P::NAME.to_string(), self.ctx.capacity);
        let instance = Instance {
            policy,
            sink: self.sink,
            name,
            label,
            params,
            capacity,
            seconds: 0.0,
        };
        Ok(match admission {
            None => Box::new(instance),
            Some(a) => {
                let admit = a.build(self.ctx)?;
                Box::new(instance.map_policy(|p| Admitted::new(p, admit)))
            }
        })
    }
}

/// Builds an instance of the named policy over any engine sink (page mode).
pub fn build_instance<S: EngineSink>(
    spec: &PolicySpec,
    ctx: &PolicyCtx,
    sink: S,
) -> Result<Box<dyn Runner>> {
    visit_policy(&spec.name, Build { spec, ctx, sink })?
}

/// Builds an instance of the named policy's object-size variant (`ctx.capacity` in bytes) over
/// `sink` wrapped in an [`ObjectSink`]; a config error naming the policy if it has none.
pub fn build_object_instance<S: EngineSink>(
    spec: &PolicySpec,
    ctx: &PolicyCtx,
    sink: S,
) -> Result<Box<dyn Runner>> {
    struct Object<'a, S>(Build<'a, S>);
    impl<S: EngineSink> PolicyVisitor for Object<'_, S> {
        type Out = Result<Box<dyn Runner>>;
        fn visit<P: PolicyDef>(self) -> Self::Out {
            P::visit_object_mode(self.0).unwrap_or_else(|| {
                Err(Error::config(format!(
                    "policy '{}' has no object-size mode; policies with one: {}",
                    P::NAME,
                    object_mode_policies().join(", ")
                )))
            })
        }
    }
    let sink = ObjectSink::new(sink, ctx.capacity as u64);
    visit_policy(&spec.name, Object(Build { spec, ctx, sink }))?
}

/// An instance of a policy defined outside the crate (see [`crate::policy::external`]): in
/// page mode, or with `object_sizes` its object-size mode (`External::into_object_mode`, capacity
/// in bytes) over `sink` wrapped in an [`ObjectSink`], as [`build_object_instance`] does for the
/// registered policies. Chosen once, here: the replay loop is the same monomorphised one.
pub fn external_instance<S: EngineSink>(
    policy: External,
    sink: S,
    object_sizes: bool,
) -> Box<dyn Runner> {
    match policy.host() {
        Some(host) => Box::new(Hosted {
            host,
            runner: external_runner(policy, sink, object_sizes),
        }),
        None => external_runner(policy, sink, object_sizes),
    }
}

/// A runner whose batches run inside its policy's runtime ([`Host`]).
struct Hosted {
    host: std::sync::Arc<dyn Host>,
    runner: Box<dyn Runner>,
}

impl Runner for Hosted {
    fn grow(&mut self, n: usize) {
        self.runner.grow(n);
    }
    fn run(&mut self, refs: &RefBatch, events: &[(usize, Event)]) {
        let runner = &mut self.runner;
        self.host.enter(&mut || runner.run(refs, events));
    }
    fn finish(self: Box<Self>) -> InstanceResult {
        self.runner.finish()
    }
    fn failed(&mut self) -> Option<Error> {
        self.runner.failed()
    }
}

fn external_runner<S: EngineSink>(
    policy: External,
    sink: S,
    object_sizes: bool,
) -> Box<dyn Runner> {
    let name = policy.name().to_string();
    if object_sizes {
        let policy = policy.into_object_mode();
        let capacity = policy.capacity();
        return Box::new(Instance {
            capacity: capacity as usize,
            policy,
            sink: ObjectSink::new(sink, capacity),
            label: name.clone(),
            name,
            params: "{}".to_string(),
            seconds: 0.0,
        });
    }
    Box::new(Instance {
        capacity: policy.capacity(),
        policy,
        sink,
        label: name.clone(),
        name,
        params: "{}".to_string(),
        seconds: 0.0,
    })
}

/// Capacities above this many pages are built at it (see [`run_with_external`]): 2^26 pages,
/// 256 GiB of 4 KiB pages, more distinct pages than a replay holds ids for on most machines.
pub const NEVER_FULL: usize = 1 << 26;

/// One decoded batch on its way from the decoding thread to the replay (and back, for reuse).
#[derive(Default)]
struct Batch {
    refs: RefBatch,
    events: Vec<(usize, Event)>,
    /// Distinct pages and requests seen up to the end of this batch.
    distinct: usize,
    requests: u64,
}

/// Trace records on their way from the reading thread to the decoding thread, and whether more
/// follow.
type Records = Result<(RecordColumns, bool)>;

/// The reading thread of [`run`]: reads batches of `batch` records into the buffers that come
/// back on `empty` and sends them on `full`, until the trace ends, the batch holding the `limit`th
/// page reference is out (so it reads no further than decoding inline would), an error (sent on,
/// then stop), or the decoding thread hangs up.
fn read_ahead(
    reader: &mut dyn TraceReader,
    batch: usize,
    limit: u64,
    empty: mpsc::Receiver<RecordColumns>,
    full: mpsc::SyncSender<Records>,
) {
    let mut page_refs: u64 = 0;
    let mut scratch = Vec::new();
    while let Ok(mut records) = empty.recv() {
        records.clear();
        match reader.read_columns(&mut records, batch, &mut scratch) {
            Ok(more) => {
                page_refs += records.page_refs();
                if full.send(Ok((records, more))).is_err() || !more || page_refs >= limit {
                    return;
                }
            }
            Err(e) => {
                let _ = full.send(Err(e));
                return;
            }
        }
    }
}

/// The decoding thread of [`run`]: turns the records of [`read_ahead`] into page references with
/// dense ids, in the buffers that come back on `empty`, and sends them on `full`, until the trace
/// ends, `limit` page references are out, an error (sent on, then stop), or the replay hangs up.
fn decode_ahead(
    decoder: &mut Decoder,
    limit: u64,
    records_in: mpsc::Receiver<Records>,
    records_back: mpsc::Sender<RecordColumns>,
    empty: mpsc::Receiver<Batch>,
    full: mpsc::SyncSender<Result<Batch>>,
) {
    let mut done: u64 = 0;
    while let Ok(mut b) = empty.recv() {
        // The reading thread only hangs up after sending its last batch or an error.
        let Ok(next) = records_in.recv() else { return };
        let (mut records, more) = match next {
            Ok(r) => r,
            Err(e) => {
                let _ = full.send(Err(e));
                return;
            }
        };
        b.refs.clear(decoder.decoded());
        b.events.clear();
        if let Err(e) = decoder.decode_columns(&mut records, &mut b.refs, &mut b.events) {
            let _ = full.send(Err(e));
            return;
        }
        let _ = records_back.send(records);
        if done + b.refs.len() as u64 > limit {
            b.refs.truncate((limit - done) as usize);
            let n = b.refs.len();
            b.events.retain(|(pos, _)| *pos <= n);
        }
        done += b.refs.len() as u64;
        b.distinct = decoder.distinct();
        b.requests = decoder.requests;
        if full.send(Ok(b)).is_err() || !more || done >= limit {
            return;
        }
    }
}

/// Replays `reader` through every instance in one pass.
pub fn run(
    reader: &mut dyn TraceReader,
    instances: &[InstanceSpec],
    system: &System,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
) -> Result<RunOutput> {
    run_with_external(reader, instances, Vec::new(), system, opts, progress)
}

/// [`run`] with policies defined outside the crate as well: their results follow those of
/// `instances`, in order. A failed external policy ends the run with its error after the batch
/// in which it failed.
pub fn run_with_external(
    reader: &mut dyn TraceReader,
    instances: &[InstanceSpec],
    external: Vec<External>,
    system: &System,
    opts: &RunOptions,
    progress: &mut dyn FnMut(&Progress) -> Result<()>,
) -> Result<RunOutput> {
    let start = Instant::now();
    let page_size = reader.page_size();
    let mut runners = Vec::with_capacity(instances.len());
    // A page-mode capacity above NEVER_FULL is built at NEVER_FULL: exact while the trace's
    // distinct pages fit (checked after every batch), and it keeps every policy's structures
    // (and its u32 slot numbers) at the footprint's scale, not the capacity's.
    let mut clamped = false;
    for spec in instances {
        if spec.capacity > crate::policy::MAX_CAPACITY {
            return Err(Error::config(format!(
                "size of {} pages (bytes in object-size mode) is larger than the largest size \
                 tierlab models, 2^60",
                spec.capacity
            )));
        }
        let capacity = if opts.object_sizes {
            spec.capacity
        } else {
            clamped |= spec.capacity > NEVER_FULL;
            spec.capacity.min(NEVER_FULL)
        };
        let ctx = PolicyCtx {
            capacity,
            tiers: system.tiers.len(),
            page_size,
        };
        let mut acct = Accounting::with_variants(system.clone(), &opts.variants)?;
        if opts.record_device_log {
            acct.log = Some(Vec::new());
        }
        let mut runner = if opts.object_sizes {
            build_object_instance(&spec.policy, &ctx, acct)?
        } else {
            build_instance(&spec.policy, &ctx, acct)?
        };
        runner.set_capacity(spec.capacity);
        runners.push(runner);
    }
    for p in external {
        let mut acct = Accounting::with_variants(system.clone(), &opts.variants)?;
        if opts.record_device_log {
            acct.log = Some(Vec::new());
        }
        runners.push(external_instance(p, acct, opts.object_sizes));
    }
    let native_count = instances.len();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.max(1))
        .build()
        .map_err(|e| Error::config(format!("thread pool: {e}")))?;
    let parallel = opts.threads > 1 && runners.len() > 1;
    let feed = |runners: &mut Vec<Box<dyn Runner>>,
                refs: &RefBatch,
                events: &[(usize, Event)],
                distinct: usize| {
        if clamped && distinct > NEVER_FULL {
            return Err(Error::resource(format!(
                "the trace has more than {NEVER_FULL} distinct pages, the most a size above it \
                 is replayed with; give a size of at most {NEVER_FULL} pages"
            )));
        }
        if parallel {
            use rayon::prelude::*;
            let step = |r: &mut Box<dyn Runner>| {
                r.grow(distinct);
                r.run(refs, events)
            };
            // Policies defined outside the crate (Python) share one interpreter lock, which
            // each holds for a whole batch (`Hosted`): side by side, one would block a replay
            // thread waiting for the other's batch. They run one after another on one task,
            // beside the crate's own policies.
            let (native, foreign) = runners.split_at_mut(native_count);
            pool.install(|| {
                rayon::join(
                    || native.par_iter_mut().for_each(step),
                    || foreign.iter_mut().for_each(step),
                )
            });
        } else {
            for r in runners.iter_mut() {
                r.grow(distinct);
                r.run(refs, events);
            }
        }
        runners
            .iter_mut()
            .find_map(|r| r.failed())
            .map_or(Ok(()), Err)
    };

    let mut decoder = Decoder::new(opts.object_sizes);
    let mut refs = RefBatch::default();
    let mut events = Vec::new();
    let limit = opts.limit.unwrap_or(u64::MAX);
    if needs_future(instances)? {
        // Offline policies see the whole future: materialise the references.
        let budget = available_memory();
        let mut more = true;
        while more && (refs.len() as u64) < limit {
            let per_ref = FUTURE_BYTES_PER_REF + if opts.object_sizes { 4 } else { 0 };
            check_future_room(instances, refs.len() as u64, budget, per_ref)?;
            more = decoder.read(reader, opts.batch, &mut refs, &mut events)?;
            progress(&Progress {
                page_refs: refs.len() as u64,
                requests: decoder.requests,
            })?;
        }
        refs.truncate(limit.min(refs.len() as u64) as usize);
        events.retain(|(pos, _)| *pos <= refs.len());
        fill_next_use(&mut refs, decoder.distinct());
        for chunk_start in (0..refs.len()).step_by(opts.batch.max(1)) {
            let chunk_end = (chunk_start + opts.batch).min(refs.len());
            let ev: Vec<(usize, Event)> = events
                .iter()
                .filter(|(p, _)| {
                    *p >= chunk_start
                        && (*p < chunk_end || (chunk_end == refs.len() && *p == chunk_end))
                })
                .map(|(p, e)| (p - chunk_start, *e))
                .collect();
            feed(
                &mut runners,
                &refs.slice(chunk_start..chunk_end),
                &ev,
                decoder.distinct(),
            )?;
        }
    } else {
        // Reading and decoding run on threads of their own, a batch or two ahead of the replay:
        // the reader, and the dense-id map with the split into columns, each cost about as much
        // as a cheap policy, so a single run keeps both cores busy. Buffers go round (records
        // between reader and decoder, reference batches between decoder and replay). Batches
        // arrive in trace order, so results are the same as decoding inline.
        let (records_tx, records_rx) = mpsc::sync_channel::<Records>(1);
        let (records_back_tx, records_back_rx) = mpsc::channel::<RecordColumns>();
        let (full_tx, full_rx) = mpsc::sync_channel::<Result<Batch>>(1);
        let (empty_tx, empty_rx) = mpsc::channel::<Batch>();
        for _ in 0..2 {
            let _ = empty_tx.send(Batch::default());
        }
        for _ in 0..3 {
            let _ = records_back_tx.send(RecordColumns::default());
        }
        let (decoder, reader_thread) = (&mut decoder, &mut *reader);
        let batch = opts.batch;
        std::thread::scope(|scope| {
            scope.spawn(move || {
                read_ahead(reader_thread, batch, limit, records_back_rx, records_tx)
            });
            scope.spawn(move || {
                decode_ahead(
                    decoder,
                    limit,
                    records_rx,
                    records_back_tx,
                    empty_rx,
                    full_tx,
                )
            });
            let result = (|| -> Result<()> {
                let mut done: u64 = 0;
                for b in full_rx.iter() {
                    let b = b?;
                    done += b.refs.len() as u64;
                    feed(&mut runners, &b.refs, &b.events, b.distinct)?;
                    progress(&Progress {
                        page_refs: done,
                        requests: b.requests,
                    })?;
                    let _ = empty_tx.send(b);
                }
                Ok(())
            })();
            // Hang up both channels so the decoding thread stops (it may be waiting on either),
            // and with it the reading thread, before the scope joins them.
            drop(full_rx);
            drop(empty_tx);
            result
        })?;
    }
    let page_refs = decoder.decoded().min(limit);
    let mut results: Vec<InstanceResult> = runners.into_iter().map(|r| r.finish()).collect();
    // In object-size mode every instance's sink counted the bytes it was asked for (the decoder
    // may have decoded past `limit`).
    let byte_accesses = match results.first() {
        Some(r) if opts.object_sizes => r.stats.byte_accesses,
        _ if opts.object_sizes => decoder.bytes,
        _ => page_refs * page_size as u64,
    };
    for r in &mut results {
        for stats in std::iter::once(&mut r.stats).chain(r.variant_stats.iter_mut()) {
            stats.accesses = page_refs;
            stats.requests = decoder.requests;
            stats.byte_accesses = byte_accesses;
        }
    }
    Ok(RunOutput {
        results,
        page_refs,
        requests: decoder.requests,
        events: decoder.events,
        distinct_pages: decoder.distinct() as u64,
        page_size,
        app_names: reader.app_names(),
        elapsed_s: start.elapsed().as_secs_f64(),
        object_sizes: opts.object_sizes,
        byte_accesses,
    })
}
