//! Opening the shoe's serial device with the configured line settings (tokio-serial).
//! The link manager (`link.rs`) calls this on every (re)connect.

use std::io;

use tokio_serial::{SerialPortBuilderExt, SerialStream};

use super::config::{Parity, ShoeConfig};

/// Opens the configured port with the configured line settings.
pub(crate) fn open_port(config: &ShoeConfig) -> io::Result<SerialStream> {
    let data_bits = match config.data_bits {
        5 => tokio_serial::DataBits::Five,
        6 => tokio_serial::DataBits::Six,
        7 => tokio_serial::DataBits::Seven,
        _ => tokio_serial::DataBits::Eight,
    };
    let parity = match config.parity {
        Parity::None => tokio_serial::Parity::None,
        Parity::Odd => tokio_serial::Parity::Odd,
        Parity::Even => tokio_serial::Parity::Even,
    };
    let stop_bits = match config.stop_bits {
        2 => tokio_serial::StopBits::Two,
        _ => tokio_serial::StopBits::One,
    };
    let port = tokio_serial::new(config.port.to_string_lossy(), config.baud)
        .data_bits(data_bits)
        .parity(parity)
        .stop_bits(stop_bits)
        .flow_control(tokio_serial::FlowControl::None)
        .open_native_async()?;
    Ok(port)
}
