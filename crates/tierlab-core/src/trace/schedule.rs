//! App-state schedules: foreground/background events for traces that carry app
//! identity but no events (block traces with a process column, per-process
//! memory traces).
//!
//! A schedule is a small file of `time, app, state` rows. States use Android's
//! importance hierarchy (papers/hybrid-dram-pcm-app-aware.md, Section 2.2,
//! Figure 1): `foreground`, `visible`, `service`, `background`, `empty`, plus
//! `exit`; or a numeric `oom_adj` (Section 4: oom_adj 0 is the foreground app;
//! KitKat's ProcessList levels 1 visible, 2-5 perceptible/backup/heavy/service,
//! 6-8 home/previous/service-B, 9-15 cached/empty, negative values system
//! processes, counted as services). `foreground` becomes a `Foreground` event,
//! `exit` an `AppExit`, every other state a `Background` event: the paper treats
//! the four lower levels alike (oom_adj != 0 is background).
//!
//! `time` is in the trace's time unit (nanoseconds for formats with timestamps,
//! the record ordinal otherwise). An event is delivered before the first access
//! whose time is at or after the row's time; rows are applied in time order
//! (ties in file order); rows after the last access are delivered at the end.
//!
//! A TOML schedule can also merge the reader's apps into groups: in block traces
//! an app shows up as several processes and threads (e.g. `UnityMain-27842`,
//! `UnityPreload-27933`), and a `[[group]]` names the app they make up, by
//! prefixes of the reader's app names:
//!
//! ```toml
//! [[group]]
//! app = "game"
//! members = ["UnityMain", "UnityPreload", "AsyncReadManage"]
//!
//! [[state]]
//! time = 0
//! app = "game"
//! state = "foreground"
//! ```
//!
//! The CSV form has a `time,app,state` header and one row per line (`#` starts a
//! comment). [`ScheduledReader`] wraps any reader, renumbers its apps (scheduled
//! apps and groups first, in order of appearance in the file, then the reader's
//! other apps in order of first sight) and merges the events in by time.
//! `trace::open` applies it when a trace spec has the option `schedule = PATH`
//! (the remaining options go to the reader).

use crate::error::{Error, Location, Result};
use crate::trace::{Event, EventKind, Record, TraceReader, TraceSpec};
use serde::Deserialize;
use std::collections::VecDeque;
use std::path::Path;

/// Android's importance levels (plus `Exit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppState {
    Foreground,
    Visible,
    Service,
    Background,
    Empty,
    Exit,
}

/// Every state name accepted.
pub const STATE_NAMES: &[&str] = &[
    "foreground",
    "visible",
    "service",
    "background",
    "empty",
    "exit",
];

impl AppState {
    /// Parses a state name (case-insensitive) or an integer oom_adj.
    pub fn parse(s: &str) -> std::result::Result<AppState, String> {
        let t = s.trim();
        if let Ok(adj) = t.parse::<i64>() {
            return AppState::from_oom_adj(adj);
        }
        Ok(match t.to_ascii_lowercase().as_str() {
            "foreground" => AppState::Foreground,
            "visible" => AppState::Visible,
            "service" => AppState::Service,
            "background" => AppState::Background,
            "empty" => AppState::Empty,
            "exit" => AppState::Exit,
            _ => {
                return Err(format!(
                    "unknown app state '{t}'; expected one of {} or an oom_adj in -17..=15",
                    STATE_NAMES.join(", ")
                ))
            }
        })
    }

    /// Android (KitKat) oom_adj levels to importance.
    pub fn from_oom_adj(adj: i64) -> std::result::Result<AppState, String> {
        Ok(match adj {
            0 => AppState::Foreground,
            1 => AppState::Visible,
            -17..=-1 | 2..=5 => AppState::Service,
            6..=8 => AppState::Background,
            9..=15 => AppState::Empty,
            _ => return Err(format!("oom_adj {adj} is outside -17..=15")),
        })
    }

    /// The event this state change delivers.
    pub fn event_kind(self) -> EventKind {
        match self {
            AppState::Foreground => EventKind::Foreground,
            AppState::Exit => EventKind::AppExit,
            _ => EventKind::Background,
        }
    }
}

/// One schedule row.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub time: u64,
    pub app: String,
    pub state: AppState,
}

/// Reader apps merged into one app.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Group {
    pub app: String,
    /// Prefixes of the reader's app names.
    pub members: Vec<String>,
}

/// A parsed schedule.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppSchedule {
    pub groups: Vec<Group>,
    /// Rows sorted by time (stable).
    pub rows: Vec<Row>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlSchedule {
    #[serde(default)]
    group: Vec<Group>,
    #[serde(default)]
    state: Vec<TomlRow>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlRow {
    time: u64,
    app: String,
    state: toml::Value,
}

impl AppSchedule {
    /// Loads a `.toml` or `.csv` schedule (by extension).
    pub fn load(path: &Path) -> Result<AppSchedule> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let origin = path.display().to_string();
        match path.extension().and_then(|e| e.to_str()) {
            Some("toml") => Self::from_toml_str(&text, &origin),
            Some("csv") => Self::from_csv_str(&text, &origin),
            _ => Err(Error::config(format!(
                "{origin}: an app-state schedule must be a .toml or .csv file"
            ))),
        }
    }

    pub fn from_toml_str(text: &str, origin: &str) -> Result<AppSchedule> {
        let t: TomlSchedule = toml::from_str(text)
            .map_err(|e| Error::input(origin, Location::Whole, format!("{e}")))?;
        let mut rows = Vec::with_capacity(t.state.len());
        for (i, r) in t.state.into_iter().enumerate() {
            let state = match &r.state {
                toml::Value::String(s) => AppState::parse(s),
                toml::Value::Integer(n) => AppState::from_oom_adj(*n),
                other => Err(format!("expected a state name or an oom_adj, got {other}")),
            }
            .map_err(|m| Error::config(format!("{origin}: state[{i}] (app '{}'): {m}", r.app)))?;
            rows.push(Row {
                time: r.time,
                app: r.app,
                state,
            });
        }
        Ok(Self::sorted(t.group, rows))
    }

    pub fn from_csv_str(text: &str, origin: &str) -> Result<AppSchedule> {
        let mut rows = Vec::new();
        let mut header_seen = false;
        for (i, raw) in text.lines().enumerate() {
            let line_no = i as u64 + 1;
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split(',').map(str::trim).collect();
            let err = |m: String| Error::input(origin, Location::Line(line_no), m);
            if !header_seen {
                header_seen = true;
                if fields == ["time", "app", "state"] {
                    continue;
                }
                return Err(err(format!(
                    "expected the header 'time,app,state', got '{line}'"
                )));
            }
            if fields.len() != 3 {
                return Err(err(format!(
                    "expected 3 fields 'time,app,state', got {}",
                    fields.len()
                )));
            }
            let time = fields[0].parse::<u64>().map_err(|_| {
                err(format!(
                    "time must be a non-negative integer, got '{}'",
                    fields[0]
                ))
            })?;
            if fields[1].is_empty() {
                return Err(err("app name is empty".into()));
            }
            let state = AppState::parse(fields[2]).map_err(err)?;
            rows.push(Row {
                time,
                app: fields[1].to_string(),
                state,
            });
        }
        Ok(Self::sorted(Vec::new(), rows))
    }

    fn sorted(groups: Vec<Group>, mut rows: Vec<Row>) -> AppSchedule {
        rows.sort_by_key(|r| r.time);
        AppSchedule { groups, rows }
    }
}

/// Opens `spec` without its `schedule` option and wraps it in the schedule the
/// option names (a `.toml` or `.csv` path): how `trace::open` applies
/// `options.schedule`.
pub fn open_scheduled(spec: &TraceSpec) -> Result<Box<dyn TraceReader>> {
    let mut inner_spec = spec.clone();
    let path = match inner_spec.options.remove("schedule") {
        Some(toml::Value::String(p)) => p,
        Some(other) => {
            return Err(Error::config(format!(
                "trace option 'schedule': expected the path of a .toml or .csv app-state \
                 schedule, got {other}"
            )))
        }
        None => return crate::trace::open(spec),
    };
    let schedule = AppSchedule::load(Path::new(&path))?;
    let inner = crate::trace::open(&inner_spec)?;
    Ok(Box::new(ScheduledReader::new(inner, &schedule)))
}

/// A reader with a schedule's events merged in and apps renumbered.
pub struct ScheduledReader {
    inner: Box<dyn TraceReader>,
    groups: Vec<(u32, Vec<String>)>,
    rows: Vec<(u64, u32, EventKind)>,
    next_row: usize,
    names: Vec<String>,
    /// Reader app id -> our app id (u32::MAX: not seen yet).
    map: Vec<u32>,
    staging: VecDeque<Record>,
    buf: Vec<Record>,
    inner_done: bool,
}

impl ScheduledReader {
    pub fn new(inner: Box<dyn TraceReader>, schedule: &AppSchedule) -> Self {
        let mut names: Vec<String> = Vec::new();
        let id_of = |name: &str, names: &mut Vec<String>| -> u32 {
            match names.iter().position(|n| n == name) {
                Some(i) => i as u32,
                None => {
                    names.push(name.to_string());
                    (names.len() - 1) as u32
                }
            }
        };
        let groups = schedule
            .groups
            .iter()
            .map(|g| (id_of(&g.app, &mut names), g.members.clone()))
            .collect();
        let rows = schedule
            .rows
            .iter()
            .map(|r| (r.time, id_of(&r.app, &mut names), r.state.event_kind()))
            .collect();
        ScheduledReader {
            inner,
            groups,
            rows,
            next_row: 0,
            names,
            map: Vec::new(),
            staging: VecDeque::new(),
            buf: Vec::new(),
            inner_done: false,
        }
    }

    /// Our id of the reader's app `a`.
    fn map_app(&mut self, a: u32) -> u32 {
        if let Some(&m) = self.map.get(a as usize) {
            if m != u32::MAX {
                return m;
            }
        }
        let inner_names = self.inner.app_names();
        let name = inner_names
            .get(a as usize)
            .cloned()
            .unwrap_or_else(|| format!("app{a}"));
        let id = if let Some((g, _)) = self
            .groups
            .iter()
            .find(|(_, m)| m.iter().any(|p| name.starts_with(p.as_str())))
        {
            *g
        } else if let Some(i) = self.names.iter().position(|n| *n == name) {
            i as u32
        } else {
            self.names.push(name);
            (self.names.len() - 1) as u32
        };
        if self.map.len() <= a as usize {
            self.map.resize(a as usize + 1, u32::MAX);
        }
        self.map[a as usize] = id;
        id
    }

    fn emit_rows_until(&mut self, time: Option<u64>) {
        while let Some(&(t, app, kind)) = self.rows.get(self.next_row) {
            if time.is_some_and(|now| t > now) {
                break;
            }
            self.staging
                .push_back(Record::Event(Event { time: t, app, kind }));
            self.next_row += 1;
        }
    }
}

impl TraceReader for ScheduledReader {
    fn read_batch(&mut self, out: &mut Vec<Record>, max: usize) -> Result<bool> {
        let max = max.max(1);
        while self.staging.len() < max && !self.inner_done {
            let mut buf = std::mem::take(&mut self.buf);
            buf.clear();
            let more = self.inner.read_batch(&mut buf, max)?;
            self.inner_done = !more;
            for rec in &buf {
                match *rec {
                    Record::Access(mut a) => {
                        self.emit_rows_until(Some(a.time));
                        a.app = self.map_app(a.app);
                        self.staging.push_back(Record::Access(a));
                    }
                    Record::Event(mut e) => {
                        e.app = self.map_app(e.app);
                        self.staging.push_back(Record::Event(e));
                    }
                }
            }
            self.buf = buf;
        }
        if self.inner_done {
            self.emit_rows_until(None);
        }
        let n = self.staging.len().min(max);
        out.extend(self.staging.drain(..n));
        Ok(!(self.inner_done && self.staging.is_empty()))
    }
    fn page_size(&self) -> u32 {
        self.inner.page_size()
    }
    fn app_names(&self) -> Vec<String> {
        self.names.clone()
    }
    fn format(&self) -> &'static str {
        self.inner.format()
    }
}
