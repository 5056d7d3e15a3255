//! Performance over time (`ibench history`): the runs of one configuration as series of
//! figures per step, their change points, and the CI gate on the newest runs. See
//! docs/history.md.

pub mod changepoint;
