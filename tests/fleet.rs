//! The fleet: scenarios and a deterministic simulation on a checking driver over
//! scripted extensions, and the std driver over real child processes.

// Helpers are `pub` to be shared by this binary's modules, not exported.
#![allow(unreachable_pub)]

#[path = "support/fleet.rs"]
mod fleet_support;

#[path = "fleet/driver.rs"]
mod driver;
#[path = "fleet/scenarios.rs"]
mod scenarios;
#[path = "fleet/simulation.rs"]
mod simulation;
