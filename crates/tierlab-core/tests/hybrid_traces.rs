//! App-state schedules and the multi-app session generator.

use tierlab_core::trace::schedule::{AppSchedule, AppState, ScheduledReader};
use tierlab_core::trace::session_gen::{SessionConfig, SessionReader};
use tierlab_core::trace::{read_all, Access, Event, EventKind, Kind, Op, Record, TraceReader};

mod common;
use common::VecReader;

fn acc(time: u64, app: u32) -> Record {
    Record::Access(Access {
        time,
        page: time,
        op: Op::Read,
        kind: Kind::File,
        app,
        npages: 1,
        size: 0,
    })
}

/// Short text of a record: `a<time>:<app>` or `<F|B|X><app>@<time>`.
fn show(r: &Record) -> String {
    match r {
        Record::Access(a) => format!("a{}:{}", a.time, a.app),
        Record::Event(e) => {
            let k = match e.kind {
                EventKind::Foreground => "F",
                EventKind::Background => "B",
                EventKind::AppExit => "X",
                EventKind::AppLaunch => "L",
            };
            format!("{k}{}@{}", e.app, e.time)
        }
    }
}

#[test]
fn csv_schedule_merges_events_by_time_and_renumbers_apps() {
    let text = "# app states\ntime,app,state\n25,mail,foreground\n0,browser,foreground\n\
                25,browser,background\n40,mail,exit\n99,browser,7\n";
    let s = AppSchedule::from_csv_str(text, "s.csv").unwrap();
    // Sorted by time, ties in file order.
    let order: Vec<(u64, &str)> = s.rows.iter().map(|r| (r.time, r.app.as_str())).collect();
    assert_eq!(
        order,
        [
            (0, "browser"),
            (25, "mail"),
            (25, "browser"),
            (40, "mail"),
            (99, "browser")
        ]
    );
    assert_eq!(
        s.rows[4].state,
        AppState::Background,
        "oom_adj 7 = previous app"
    );
    // Reader apps: 0 = "sync", 1 = "browser", 2 = "mail".
    let inner = VecReader::new(
        vec![acc(10, 1), acc(20, 0), acc(30, 2), acc(50, 1)],
        &["sync", "browser", "mail"],
    );
    let mut r = ScheduledReader::new(Box::new(inner), &s);
    // Small batches exercise the staging across calls.
    let mut out = Vec::new();
    while r.read_batch(&mut out, 2).unwrap() {}
    let got: Vec<String> = out.iter().map(show).collect();
    // Our ids: browser 0, mail 1 (schedule order), then sync 2.
    assert_eq!(
        got,
        ["F0@0", "a10:0", "a20:2", "F1@25", "B0@25", "a30:1", "X1@40", "a50:0", "B0@99"]
    );
    assert_eq!(r.app_names(), ["browser", "mail", "sync"]);
}

#[test]
fn toml_schedule_groups_processes_into_apps() {
    let text = r#"
        [[group]]
        app = "game"
        members = ["UnityMain", "UnityPreload"]

        [[state]]
        time = 0
        app = "game"
        state = 0

        [[state]]
        time = 5
        app = "game"
        state = "Empty"
    "#;
    let s = AppSchedule::from_toml_str(text, "s.toml").unwrap();
    assert_eq!(s.rows[0].state, AppState::Foreground);
    assert_eq!(s.rows[1].state, AppState::Empty);
    let inner = VecReader::new(
        vec![acc(1, 0), acc(2, 1), acc(3, 2), acc(6, 0)],
        &["UnityMain", "kworker/u17:1", "UnityPreload"],
    );
    let mut r = ScheduledReader::new(Box::new(inner), &s);
    let got: Vec<String> = read_all(&mut r).unwrap().iter().map(show).collect();
    assert_eq!(got, ["F0@0", "a1:0", "a2:1", "a3:0", "B0@5", "a6:0"]);
    assert_eq!(r.app_names(), ["game", "kworker/u17:1"]);
}

#[test]
fn schedule_errors_name_the_place() {
    let e = AppSchedule::from_csv_str("time,app,state\n0,a,foreground\n5,b,asleep\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s.csv:line 3") && e.contains("unknown app state 'asleep'"),
        "{e}"
    );
    let e = AppSchedule::from_csv_str("t,a,s\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && e.contains("header"), "{e}");
    let e = AppSchedule::from_csv_str("time,app,state\n-1,a,0\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 2") && e.contains("time"), "{e}");
    let e = AppSchedule::from_csv_str("time,app,state\n1,a,16\n", "s.csv")
        .unwrap_err()
        .to_string();
    assert!(e.contains("oom_adj 16"), "{e}");
    let e = AppSchedule::from_toml_str("[[state]]\ntime = 0\napp = \"a\"\nstate = 1.5\n", "s.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("s.toml") && e.contains("state[0]"), "{e}");
    // A file that is neither .toml nor .csv.
    let e = AppSchedule::load(std::path::Path::new("/nonexistent/x.json"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("x.json"), "{e}");
}

#[test]
fn oom_adj_levels() {
    let levels: Vec<AppState> = [0, 1, 2, 5, 6, 8, 9, 15, -16]
        .iter()
        .map(|a| AppState::from_oom_adj(*a).unwrap())
        .collect();
    use AppState::*;
    assert_eq!(
        levels,
        [Foreground, Visible, Service, Service, Background, Background, Empty, Empty, Service]
    );
    assert_eq!(Visible.event_kind(), EventKind::Background);
    assert_eq!(Exit.event_kind(), EventKind::AppExit);
}

fn generate(cfg: SessionConfig) -> Vec<Record> {
    read_all(&mut SessionReader::new(cfg).unwrap()).unwrap()
}

#[test]
fn session_generator_is_seeded_and_has_the_papers_mix() {
    let a = generate(SessionConfig::browser_session(7, 60_000));
    assert_eq!(a, generate(SessionConfig::browser_session(7, 60_000)));
    assert_ne!(a, generate(SessionConfig::browser_session(8, 60_000)));
    let accesses: Vec<&Access> = a
        .iter()
        .filter_map(|r| match r {
            Record::Access(x) => Some(x),
            _ => None,
        })
        .collect();
    assert_eq!(accesses.len(), 60_000);
    // One Foreground event for the browser (app 0) at the start, nothing else.
    let events: Vec<&Event> = a
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) => Some(e),
            _ => None,
        })
        .collect();
    assert_eq!(events.len(), 1);
    assert_eq!((events[0].app, events[0].kind), (0, EventKind::Foreground));
    // Foreground:background about 15:1 (bg share 1/16 = 6.25%).
    let bg = accesses.iter().filter(|x| x.app != 0).count() as f64 / 60_000.0;
    assert!((0.04..0.09).contains(&bg), "background share {bg}");
    // Background references come in bursts: far fewer app changes than refs.
    let changes = accesses.windows(2).filter(|w| w[0].app != w[1].app).count();
    assert!(changes < accesses.len() / 20, "{changes} app changes");
    // Background apps write more than they read (pushes update databases).
    let bg_writes = accesses
        .iter()
        .filter(|x| x.app != 0 && x.op == Op::Write)
        .count() as f64;
    assert!(bg_writes / (bg * 60_000.0) > 0.5);
    // Apps own disjoint page spaces.
    assert!(accesses.iter().all(|x| (x.page >> 28) as u32 == x.app));
    // The mix is per reference: the browser's stream references (pages at
    // 2^25 and up in its space) are its fg_mix[2] = 20% share, not the ~90% that
    // drawing a whole run with that probability gave.
    let fg: Vec<&&Access> = accesses.iter().filter(|x| x.app == 0).collect();
    let stream = fg.iter().filter(|x| x.page >= 1 << 25).count() as f64 / fg.len() as f64;
    assert!((0.15..0.25).contains(&stream), "stream share {stream}");
    // So fewer than 40% of references are first touches (the paper's hit ratios rise with
    // memory up to 70% of the footprint, Figure 4(a)).
    let distinct: std::collections::HashSet<u64> = accesses.iter().map(|x| x.page).collect();
    assert!(
        distinct.len() * 5 < accesses.len() * 2,
        "{} pages",
        distinct.len()
    );
}

#[test]
fn switching_session_rotates_the_foreground() {
    let recs = generate(SessionConfig::switching_session(3, 50_000));
    let fg: Vec<u32> = recs
        .iter()
        .filter_map(|r| match r {
            Record::Event(e) if e.kind == EventKind::Foreground => Some(e.app),
            _ => None,
        })
        .collect();
    assert_eq!(fg, [0, 1, 2, 3, 4, 0, 1, 2, 3, 4]);
    let bg_events = recs
        .iter()
        .filter(|r| matches!(r, Record::Event(e) if e.kind == EventKind::Background))
        .count();
    assert_eq!(bg_events, 9);
    let n = recs
        .iter()
        .filter(|r| matches!(r, Record::Access(_)))
        .count();
    assert_eq!(n, 50_000);
}

#[test]
fn session_specs_open_as_traces() {
    use tierlab_core::trace::{open, TraceSpec};
    let mut r = open(&TraceSpec::new("session:preset=switching,refs=1000,seed=2")).unwrap();
    assert_eq!(r.app_names().len(), 5);
    assert_eq!(
        read_all(r.as_mut())
            .unwrap()
            .iter()
            .filter(|x| matches!(x, Record::Access(_)))
            .count(),
        1000
    );
    let e = open(&TraceSpec::new("session:preset=browser,color=red"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("unknown key 'color'"), "{e}");
    let e = open(&TraceSpec::new("session:refs=lots"))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("refs must be a number"), "{e}");
}
