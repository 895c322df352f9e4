//! The protobuf codec of the generated service code: prost's, except that a
//! request that does not decode is INVALID_ARGUMENT / INVALID_REQUEST (the
//! caller sent bad bytes) instead of tonic's INTERNAL, which would read as
//! the server's fault.

use std::collections::HashMap;

use tonic::Status;
use tonic::codec::{BufferSettings, Codec as TonicCodec, DecodeBuf, Decoder};
use tonic_prost::{ProstDecoder, ProstEncoder};
use tonic_types::{ErrorDetails, StatusExt};

use crate::proto::ErrorReason;

/// The encoding buffer of a reply or a stream: 1 KiB to start with (it
/// grows to fit a larger message), where tonic's default is 8 KiB held for
/// the life of every stream, most of a big fan-out's memory per follower.
/// A stream's messages are handed to the transport in batches of at most 8
/// KiB (and one message), where tonic's default is 32 KiB: a stream that
/// is not read holds a batch being written and the next one (issue 35).
const ENCODE_BUFFER: (usize, usize) = (1024, 8 * 1024);

/// A prost codec whose decode errors are the caller's: INVALID_ARGUMENT with
/// an ErrorInfo of reason INVALID_REQUEST. `T` is encoded, `U` decoded.
#[derive(Debug)]
pub struct Codec<T, U> {
    _types: std::marker::PhantomData<(T, U)>,
}

impl<T, U> Default for Codec<T, U> {
    fn default() -> Self {
        Codec {
            _types: std::marker::PhantomData,
        }
    }
}

impl<T, U> TonicCodec for Codec<T, U>
where
    T: prost::Message + Send + 'static,
    U: prost::Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = MessageDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        ProstEncoder::new(BufferSettings::new(ENCODE_BUFFER.0, ENCODE_BUFFER.1))
    }

    fn decoder(&mut self) -> Self::Decoder {
        MessageDecoder(ProstDecoder::new(BufferSettings::default()))
    }
}

/// Decodes `U` with prost, mapping a malformed message to INVALID_ARGUMENT.
#[derive(Debug)]
pub struct MessageDecoder<U>(ProstDecoder<U>);

impl<U: prost::Message + Default> Decoder for MessageDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|status| {
            let reason = ErrorReason::InvalidRequest.as_str_name();
            let details = ErrorDetails::with_error_info(reason, super::DOMAIN, HashMap::new());
            let message = format!(
                "the request does not decode as protobuf: {}",
                status.message()
            );
            Status::with_error_details(tonic::Code::InvalidArgument, message, details)
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}
