//! Where the writer hands each computation and its instructions: a whole
//! message ([`Collect`]), or bytes encoded as they come ([`Stream`]).

use super::messages::*;
use super::ProtoError;
use prost::Message;

/// Where [`Writer::module`] hands each computation and its instructions.
pub(super) trait CompSink {
    /// The module's name and entry name are known.
    fn start(&mut self, module: &HloModuleProto) -> Result<(), ProtoError>;
    fn begin_computation(&mut self, name: &str) -> Result<(), ProtoError>;
    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError>;
    /// The computation's other fields (its `instructions` empty).
    fn end_computation(&mut self, cp: HloComputationProto) -> Result<(), ProtoError>;
}

/// Builds the whole message ([`module_to_proto`]).
#[derive(Default)]
pub(super) struct Collect {
    instrs: Vec<HloInstructionProto>,
    pub(super) done: Vec<HloComputationProto>,
}

impl CompSink for Collect {
    fn start(&mut self, _: &HloModuleProto) -> Result<(), ProtoError> {
        Ok(())
    }

    fn begin_computation(&mut self, _: &str) -> Result<(), ProtoError> {
        Ok(())
    }

    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError> {
        self.instrs.push(ip.clone());
        Ok(())
    }

    fn end_computation(&mut self, mut cp: HloComputationProto) -> Result<(), ProtoError> {
        cp.instructions = std::mem::take(&mut self.instrs);
        self.done.push(cp);
        Ok(())
    }
}

/// Encodes as it goes ([`write_module_proto`]): a computation's bytes are
/// its name, each instruction as it comes, then its other fields; the
/// module's, its name and entry name, the computations, then the rest.
/// The same bytes as encoding the whole message, as fields go in tag order.
pub(super) struct Stream<'w> {
    pub(super) out: &'w mut dyn std::io::Write,
    pub(super) comp: Vec<u8>,
    /// The writer's failure, reported as such.
    pub(super) io: Option<std::io::Error>,
}

impl Stream<'_> {
    fn write(&mut self, bytes: &[u8]) -> Result<(), ProtoError> {
        self.out.write_all(bytes).map_err(|e| {
            let message = e.to_string();
            self.io = Some(e);
            ProtoError::new(message)
        })
    }
}

impl CompSink for Stream<'_> {
    fn start(&mut self, module: &HloModuleProto) -> Result<(), ProtoError> {
        let mut head = Vec::new();
        if !module.name.is_empty() {
            prost::encoding::string::encode(1, &module.name, &mut head);
        }
        if !module.entry_computation_name.is_empty() {
            prost::encoding::string::encode(2, &module.entry_computation_name, &mut head);
        }
        self.write(&head)
    }

    fn begin_computation(&mut self, name: &str) -> Result<(), ProtoError> {
        self.comp.clear();
        if !name.is_empty() {
            prost::encoding::string::encode(1, &name.to_string(), &mut self.comp);
        }
        Ok(())
    }

    fn instruction(&mut self, ip: &HloInstructionProto) -> Result<(), ProtoError> {
        prost::encoding::message::encode(2, ip, &mut self.comp);
        Ok(())
    }

    fn end_computation(&mut self, mut cp: HloComputationProto) -> Result<(), ProtoError> {
        cp.name.clear();
        cp.encode_raw(&mut self.comp);
        let mut head = Vec::with_capacity(10);
        prost::encoding::encode_key(3, prost::encoding::WireType::LengthDelimited, &mut head);
        prost::encoding::encode_varint(self.comp.len() as u64, &mut head);
        self.write(&head)?;
        let comp = std::mem::take(&mut self.comp);
        let r = self.write(&comp);
        self.comp = comp;
        r
    }
}
