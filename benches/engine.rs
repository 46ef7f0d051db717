//! Rounds per second per variant, 1 seat and 7 seats (or the game's maximum), on
//! pre-generated inputs: `cargo bench --bench engine`. The guide records the figures
//! (docs/src/benchmarks.md).

use criterion::{black_box, criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use croupier::engine::{variant::BUILT_IN, Engine, Event, Input, Variant};
use croupier::sim::{Style, TableSim};
use std::sync::Arc;

const ROUNDS: usize = 2_000;

/// The inputs of `rounds` rounds played in `style`, generated once.
fn session(variant: &Arc<Variant>, style: Style, rounds: usize) -> Vec<Input> {
    let mut engine = Engine::new(Arc::clone(variant));
    let mut sim = TableSim::new(Arc::clone(variant), 7, style);
    let mut inputs = Vec::new();
    let mut events = Vec::new();
    let mut settled = 0;
    while settled < rounds {
        let input = sim.next_input(&engine);
        events.clear();
        engine
            .apply(&input, &mut events)
            .expect("the simulator sends legal inputs");
        settled += events
            .iter()
            .filter(|e| matches!(e, Event::RoundSettled(_)))
            .count();
        inputs.push(input);
    }
    inputs
}

/// Plays `inputs` through a fresh engine.
fn play(variant: &Arc<Variant>, inputs: &[Input], events: &mut Vec<Event>) {
    let mut engine = Engine::new(Arc::clone(variant));
    for input in inputs {
        events.clear();
        let _ = black_box(engine.apply(input, events));
    }
    black_box(&engine);
}

fn rounds_per_second(c: &mut Criterion) {
    let mut group = c.benchmark_group("rounds");
    group.throughput(Throughput::Elements(ROUNDS as u64));
    for (stem, _) in BUILT_IN {
        let variant = Arc::new(Variant::built_in(stem).expect("shipped").expect("valid"));
        for seats in [1, variant.deal.seats.min(7)] {
            let inputs = session(&variant, Style::Steady { seats }, ROUNDS);
            group.bench_with_input(
                BenchmarkId::new(*stem, format!("{seats} seat(s)")),
                &inputs,
                |b, inputs| {
                    let mut events = Vec::with_capacity(64);
                    b.iter(|| play(&variant, inputs, &mut events))
                },
            );
        }
    }
    group.finish();
}

/// Multi-hand on a common draw: one round with 10,000 players on each of the 3 boxes.
/// Target: under 50 ms a round on one core.
fn common_draw_crowd(c: &mut Criterion) {
    let variant = Arc::new(
        Variant::built_in("multihand")
            .expect("shipped")
            .expect("valid"),
    );
    let mut group = c.benchmark_group("common_draw");
    group.sample_size(10);
    for players in [1_000, 10_000] {
        let inputs = session(&variant, Style::Crowd { players }, 1);
        group.throughput(Throughput::Elements(1));
        group.bench_with_input(
            BenchmarkId::new("round", format!("{players} players")),
            &inputs,
            |b, inputs| {
                let mut events = Vec::with_capacity(1024);
                b.iter(|| play(&variant, inputs, &mut events))
            },
        );
    }
    group.finish();
}

criterion_group!(benches, rounds_per_second, common_draw_crowd);
criterion_main!(benches);
