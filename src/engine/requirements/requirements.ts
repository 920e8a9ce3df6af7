/**
 * The normative requirements of RFC 7306 §4-§8 and of draft-wood-storm-rdmap-ext-v2-00
 * §4-§8, one row per MUST / MUST NOT / REQUIRED sentence, quoted from the spec texts
 * (specs/ in the repository). Tests name the rows they check as `[id]` in their titles; the
 * traceability test proves every sentence has a row and every row a test, and writes
 * docs/traceability.md. `behaviour` rows are non-MUST statements the engine also pins.
 */

import { IBTA_VERBS_REQUIREMENTS } from './ibta-verbs.js';

/** Which document a requirement comes from. */
export type RequirementDocument = 'rfc7306' | 'v2-draft' | 'ibta-1.5';

/** One requirement. */
export interface Requirement {
  /** `R7306-<section>-<n>`, `RV2-<section>-<n>` or `IBTA-<section>-<n>`. */
  readonly id: string;
  readonly document: RequirementDocument;
  readonly section: string;
  /**
   * The sentence as the spec text has it (a distinctive part of it for the V2 draft; the
   * rule in our words for IBTA, whose text is not redistributable).
   */
  readonly text: string;
  /** `behaviour` marks a non-MUST statement that tests also pin. */
  readonly kind?: 'behaviour';
}

/** RFC 7306 §4-§8 (sections as numbered in RFC 7306; the stored text lost its headings). */
export const RFC7306_REQUIREMENTS: readonly Requirement[] = [
  {
    id: 'R7306-4.1-1',
    document: 'rfc7306',
    section: '4.1',
    text: 'All RDMA Messages defined in this specification MUST have: The RDMA Version (RV) field: 01b.',
  },
  {
    id: 'R7306-5-1',
    document: 'rfc7306',
    section: '5',
    text: 'Therefore, the Responder RNIC MUST implement mechanisms to prevent Atomic Operations to a memory registered for Atomic Operations while an Atomic Operation targeting the memory is in progress.',
  },
  {
    id: 'R7306-5-2',
    document: 'rfc7306',
    section: '5',
    text: 'An RNIC that supports Atomic Operations as specified in this document MUST implement both the FetchAdd operation as specified in Section 5.1.1 and the CmpSwap operation as specified in Section 5.1.2.',
  },
  {
    id: 'R7306-5.1-1',
    document: 'rfc7306',
    section: '5.1',
    text: 'Atomic Operation Response Messages MUST use the Untagged Buffer model with QN 3.',
  },
  {
    id: 'R7306-5.1.1-1',
    document: 'rfc7306',
    section: '5.1.1',
    text: 'FetchAdd Atomic Operations MUST target ULP Buffer addresses that are 64 bit aligned.',
  },
  {
    id: 'R7306-5.1.1-2',
    document: 'rfc7306',
    section: '5.1.1',
    text: "FetchAdd Atomic Operations that target ULP Buffer addresses that are not 64 bit aligned MUST be surfaced as errors, and the Responder's memory MUST NOT be modified in such cases.",
  },
  {
    id: 'R7306-5.1.1-3',
    document: 'rfc7306',
    section: '5.1.1',
    text: 'Additionally, an error MUST be surfaced and a terminate message MUST be generated.',
  },
  {
    id: 'R7306-5.1.2-1',
    document: 'rfc7306',
    section: '5.1.2',
    text: 'After the operation, the remote data Buffer MUST contain the "Original Remote Data Value" (if comparison did not match) or the masked "Swap Data" (if the comparison did match).',
  },
  {
    id: 'R7306-5.1.2-2',
    document: 'rfc7306',
    section: '5.1.2',
    text: 'CmpSwap Atomic Operations MUST target ULP Buffer addresses that are 64 bit aligned.',
  },
  {
    id: 'R7306-5.1.2-3',
    document: 'rfc7306',
    section: '5.1.2',
    text: "The operation MUST NOT be performed,  The Responder's memory MUST NOT be modified,",
  },
  {
    id: 'R7306-5.1.2-4',
    document: 'rfc7306',
    section: '5.1.2',
    text: 'The result MUST be surfaced as an error, and  A terminate message MUST be generated.',
  },
  {
    id: 'R7306-5.2-1',
    document: 'rfc7306',
    section: '5.2',
    text: 'Atomic Operation Request messages MUST use the same Queue Number as RDMA Read Requests (QN 1).',
  },
  {
    id: 'R7306-5.2-2',
    document: 'rfc7306',
    section: '5.2',
    text: 'Atomic Operation Response messages MUST set Queue Number (QN) to 3 in the DDP header.',
  },
  {
    id: 'R7306-5.2.1-1',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'All Atomic Operation Codes from Figure 5 MUST be implemented by an RNIC that supports Atomic Operations.',
  },
  {
    id: 'R7306-5.2.1-2',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'The Remote Tagged Offset MAY start at an arbitrary offset but MUST represent a ULP Buffer address that is 64 bit aligned.',
  },
  {
    id: 'R7306-5.2.1-3',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'An Atomic Operation Request Message MUST reference an Untagged Buffer.',
  },
  {
    id: 'R7306-5.2.1-4',
    document: 'rfc7306',
    section: '5.2.1',
    text: "That is, the Local Peer's RDMAP layer MUST request that the DDP mark the Message as Untagged.",
  },
  {
    id: 'R7306-5.2.1-5',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'One Atomic Operation Request Message MUST consume one Untagged Buffer.',
  },
  {
    id: 'R7306-5.2.1-6',
    document: 'rfc7306',
    section: '5.2.1',
    text: "The Responder's RDMAP layer MUST process an Atomic Operation Request Message.",
  },
  {
    id: 'R7306-5.2.1-7',
    document: 'rfc7306',
    section: '5.2.1',
    text: "A valid Atomic Operation Request Message MUST NOT be delivered to the Responder's ULP (i.e., it is processed by the RDMAP layer).",
  },
  {
    id: 'R7306-5.2.1-8',
    document: 'rfc7306',
    section: '5.2.1',
    text: "At the Responder, an error MUST be surfaced in response to delivery to the Remote Peer's RDMAP layer of an Atomic Operation Request Message with an Atomic Operation Code that the RNIC does not support.",
  },
  {
    id: 'R7306-5.2.1-9',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'An Atomic Operation Request Message MUST reference the RDMA Read Request Queue.',
  },
  {
    id: 'R7306-5.2.1-10',
    document: 'rfc7306',
    section: '5.2.1',
    text: "That is, the Requester's RDMAP layer MUST request that the DDP layer set the Queue Number field to one.",
  },
  {
    id: 'R7306-5.2.1-11',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'The Requester MUST pass to the DDP layer Atomic Operation Request Messages in the order they were submitted by the ULP.',
  },
  {
    id: 'R7306-5.2.1-12',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'The Responder MUST process the Atomic Operation Request Messages in the order they were sent.',
  },
  {
    id: 'R7306-5.2.1-13',
    document: 'rfc7306',
    section: '5.2.1',
    text: 'If the Responder receives a valid Atomic Operation Request Message, it MUST respond with a valid Atomic Operation Response Message.',
  },
  {
    id: 'R7306-5.2.2-1',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'An Atomic Operation Response Message MUST consume an Untagged Buffer.',
  },
  {
    id: 'R7306-5.2.2-2',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'That is, the Responder RDMAP layer MUST request that the DDP mark the Message as Untagged.',
  },
  {
    id: 'R7306-5.2.2-3',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'An Atomic Operation Response Message MUST reference the Queue Number 3.',
  },
  {
    id: 'R7306-5.2.2-4',
    document: 'rfc7306',
    section: '5.2.2',
    text: "That is, the Responder's RDMAP layer MUST request that the DDP layer set the Queue Number field to 3.",
  },
  {
    id: 'R7306-5.2.2-5',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'The Responder MUST ensure that a sufficient number of Untagged Buffers are available on the RDMA Read Request Queue (Queue with DDP Queue Number 1) to support the maximum number of Atomic Operation Requests negotiated by the ULP in addition to the maximum number of RDMA Read Requests negotiated by the ULP.',
  },
  {
    id: 'R7306-5.2.2-6',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'The Requester MUST ensure that a sufficient number of Untagged Buffers are available on the RDMA Atomic Response Queue (Queue with DDP Queue Number 3) to support the maximum number of Atomic Operation Requests negotiated by the ULP.',
  },
  {
    id: 'R7306-5.2.2-7',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'The RDMAP layer MUST Deliver the Atomic Operation Response Message to the ULP.',
  },
  {
    id: 'R7306-5.2.2-8',
    document: 'rfc7306',
    section: '5.2.2',
    text: 'When the Responder receives Atomic Operation Request messages, the Responder RDMAP layer MUST pass Atomic Operation Response Messages to the DDP layer, in the order that the Atomic Operation Request Messages were received by the RDMAP layer, at the Responder.',
  },
  {
    id: 'R7306-5.3-1',
    document: 'rfc7306',
    section: '5.3',
    text: "Atomicity Guarantees Atomicity of the Read Modify Write (RMW) on the Responder's node by the Atomic Operation MUST be assured in the context of concurrent atomic accesses by other RDMAP Streams on the same RNIC.",
  },
  {
    id: 'R7306-5.4-1',
    document: 'rfc7306',
    section: '5.4',
    text: 'For an Atomic Operation, the Requester MUST NOT consider the contents of the Tagged Buffer at the Responder to be modified by that specific Atomic Operation until the Atomic Operation Response Message has been Delivered to RDMAP at the Requester.',
  },
  {
    id: 'R7306-5.4-2',
    document: 'rfc7306',
    section: '5.4',
    text: 'Atomicity guarantees MUST be provided within the scope of a single RNIC.',
  },
  {
    id: 'R7306-5.4-3',
    document: 'rfc7306',
    section: '5.4',
    text: 'Atomic Operation Request Messages MUST NOT start processing at the Responder until they have been Delivered to RDMAP by DDP.',
  },
  {
    id: 'R7306-5.4-4',
    document: 'rfc7306',
    section: '5.4',
    text: 'Atomic Operation Response Message processing at the Responder MUST be started only after the Atomic Operation Request Message has been Delivered by the DDP layer (thus, all previous RDMA Messages on that DDP Stream have been Delivered).',
  },
  {
    id: 'R7306-5.4-5',
    document: 'rfc7306',
    section: '5.4',
    text: 'An Atomic Operation MUST NOT be Completed at the Requester until the DDP layer Delivers the associated incoming Atomic Operation Response Message.',
  },
  {
    id: 'R7306-5.4-6',
    document: 'rfc7306',
    section: '5.4',
    text: 'If more than one outstanding Atomic Request Message is supported by both peers, the Atomic Operation Request Messages MUST be processed in the order they were delivered by the DDP layer on the Responder.',
  },
  {
    id: 'R7306-5.4-7',
    document: 'rfc7306',
    section: '5.4',
    text: 'Atomic Operation Response Messages MUST be submitted to the DDP layer on the Responder in the order the Atomic Operation Request Messages were Delivered by DDP.',
  },
  {
    id: 'R7306-6.3-1',
    document: 'rfc7306',
    section: '6.3',
    text: 'An Immediate Data or Immediate Data with SE Message MUST reference an Untagged Buffer.',
  },
  {
    id: 'R7306-6.3-2',
    document: 'rfc7306',
    section: '6.3',
    text: "That is, the Local Peer's RDMAP Layer MUST request that the DDP layer mark the Message as Untagged.",
  },
  {
    id: 'R7306-6.3-3',
    document: 'rfc7306',
    section: '6.3',
    text: 'One Immediate Data or Immediate Data with SE Message MUST consume one Untagged Buffer.',
  },
  {
    id: 'R7306-6.3-4',
    document: 'rfc7306',
    section: '6.3',
    text: "At the Remote Peer, the Immediate Data and Immediate Data with SE Messages MUST be Delivered to the Remote Peer's ULP in the order they were sent.",
  },
  {
    id: 'R7306-6.3-5',
    document: 'rfc7306',
    section: '6.3',
    text: "For an Immediate Data or Immediate Data with SE Message, the Local Peer's RDMAP Layer MUST request that the DDP layer set the Queue Number field to zero.",
  },
  {
    id: 'R7306-6.3-6',
    document: 'rfc7306',
    section: '6.3',
    text: "For an Immediate Data or Immediate Data with SE Message, the Local Peer's RDMAP Layer MUST request that the DDP layer transmit 8 bytes of data.",
  },
  {
    id: 'R7306-6.3-7',
    document: 'rfc7306',
    section: '6.3',
    text: 'The Local Peer MUST issue Immediate Data and Immediate Data with SE Messages in the order they were submitted by the ULP.',
  },
  {
    id: 'R7306-6.3-8',
    document: 'rfc7306',
    section: '6.3',
    text: 'The Remote Peer MUST check that Immediate Data and Immediate Data with SE Messages include exactly 8 bytes of data from the DDP layer.',
  },
  {
    id: 'R7306-8.1-1',
    document: 'rfc7306',
    section: '8.1',
    text: 'The Local Peer MUST send a Terminate Message for each of the following cases: 1.',
  },
  {
    id: 'R7306-8.2-1',
    document: 'rfc7306',
    section: '8.2',
    text: 'Errors Detected at the Remote Peer On incoming Atomic Requests, Atomic Responses, Immediate Data, and Immediate Data with Solicited Event, the following MUST be validated:',
  },
  {
    id: 'R7306-8.2-2',
    document: 'rfc7306',
    section: '8.2',
    text: 'The DDP layer MUST validate all DDP Segment fields.',
  },
  {
    id: 'R7306-8.2-3',
    document: 'rfc7306',
    section: '8.2',
    text: 'The RDMA OpCode MUST be valid.',
  },
  {
    id: 'R7306-8.2-4',
    document: 'rfc7306',
    section: '8.2',
    text: 'The RDMA Version MUST be valid.',
  },
  {
    id: 'R7306-8.2-5',
    document: 'rfc7306',
    section: '8.2',
    text: "On incoming Atomic requests the following additional validation MUST be performed:  The RDMAP layer MUST validate that the Remote Peer's Tagged ULP Buffer address references a ULP Buffer address that is 64 bit aligned.",
  },
  {
    id: 'R7306-8.2-6',
    document: 'rfc7306',
    section: '8.2',
    text: 'In the case of an error, the RDMAP layer MUST generate a Terminate Message indicating RDMA Layer Remote Operation Error with Error Code Name "Catastrophic error, localized to RDMAP Stream" as described in Section 4.8 of RFC 5040.',
  },
  {
    id: 'R7306-1.1-probe',
    document: 'rfc7306',
    section: '1.1',
    kind: 'behaviour',
    text: 'A Remote Operation Error or Unexpected OpCode error will be reported by the remote peer if there is an Immediate Data or Atomic Operation that is not supported by the remote peer.',
  },
  {
    id: 'R7306-5.1.1-4',
    document: 'rfc7306',
    section: '5.1.1',
    kind: 'behaviour',
    text: 'The setting of the Add Mask field to 0x0000000000000000 results in Atomic Add of 64 bit Original Remote Data Value and 64 bit "Add Data".',
  },
  {
    id: 'R7306-7-table',
    document: 'rfc7306',
    section: '7',
    kind: 'behaviour',
    text: 'The following table summarizes the ordering relationships for Atomic and Immediate Data operations from the standpoint of the Local Peer issuing the Operations.',
  },
];

/** draft-wood-storm-rdmap-ext-v2-00 §4-§8. */
export const V2_DRAFT_REQUIREMENTS: readonly Requirement[] = [
  {
    id: 'RV2-4.1-1',
    document: 'v2-draft',
    section: '4.1',
    text: 'When the RDMAP version has been negotiated to 2, the RDMAP RV field MUST be set to 2 for all Operations.',
  },
  {
    id: 'RV2-4.1-2',
    document: 'v2-draft',
    section: '4.1',
    text: 'The first octet reserved for ULP use in the DDP Protocol MUST be used by the RDMAP to carry the RDMAP Control Field.',
  },
  {
    id: 'RV2-4.1-3',
    document: 'v2-draft',
    section: '4.1',
    text: 'The ordering of the bits in the first octet MUST be as shown in Figure 1.',
  },
  {
    id: 'RV2-4.1-4',
    document: 'v2-draft',
    section: '4.1',
    text: 'Figure 2 also defines when the STag, Tagged Offset, and Queue Number fields MUST be provided for the RDMA Messages defined in this specification.',
  },
  {
    id: 'RV2-4.1-9',
    document: 'v2-draft',
    section: '4.1',
    text: 'Figure 2 defines the values of RDMA Opcode field that MUST be used for the RDMA Messages defined in this specification.',
  },
  {
    id: 'RV2-4.1-5',
    document: 'v2-draft',
    section: '4.1',
    text: 'All RDMA Messages defined in this specification MUST have:',
  },
  {
    id: 'RV2-4.1-6',
    document: 'v2-draft',
    section: '4.1',
    text: 'To support RV field set to 10b, an RNIC MUST:',
  },
  {
    id: 'RV2-4.1-7',
    document: 'v2-draft',
    section: '4.1',
    text: 'the second through fifth octets of the DDP RsvdULP field MUST be used by RDMAP to carry the Invalidate STag.',
  },
  {
    id: 'RV2-4.1-8',
    document: 'v2-draft',
    section: '4.1',
    text: 'All other DDP and RDMAP control fields MUST be set as described in [RFC5040] except for the RV field which MUST be 2.',
  },
  {
    id: 'RV2-4.2-1',
    document: 'v2-draft',
    section: '4.2',
    text: 'The following figure defines which RDMA Headers MUST be used on each new RDMA Message and which new RDMA Messages are allowed to carry ULP payload',
  },
  {
    id: 'RV2-5.3-1',
    document: 'v2-draft',
    section: '5.3',
    text: 'The L bit MUST be set to 1 only in the ULPDU that contains immediate data.',
  },
  {
    id: 'RV2-5.3-2',
    document: 'v2-draft',
    section: '5.3',
    text: 'The immediate data MUST be the only data allowed in the ULPDU with the L bit set to 1.',
  },
  {
    id: 'RV2-5.3-3',
    document: 'v2-draft',
    section: '5.3',
    text: 'At the data sink, if the operation is completed successfully, the RDMAP Layer MUST pass the eight bytes of immediate data to the ULP Layer.',
  },
  {
    id: 'RV2-5.3-4',
    document: 'v2-draft',
    section: '5.3',
    text: 'When any Send with Immediate Data variant has a message length of zero, the only ULDPU MUST have the immediate data and the L bit MUST be set to 1.',
  },
  {
    id: 'RV2-6-1',
    document: 'v2-draft',
    section: '6',
    text: 'RDMA Read V2 Response Messages MUST use the Untagged Buffer model with QN=3.',
  },
  {
    id: 'RV2-6-2',
    document: 'v2-draft',
    section: '6',
    text: 'Queue number 3 MUST be used to track outstanding RDMA Read V2 Request messages at the Requester.',
  },
  {
    id: 'RV2-6-3',
    document: 'v2-draft',
    section: '6',
    text: 'the MSN MUST be used to locate the corresponding RDMA Read V2 request in order to place the data and Complete the Operation.',
  },
  {
    id: 'RV2-6.1-1',
    document: 'v2-draft',
    section: '6.1',
    text: 'the RDMA Read V2 Request Header that MUST be used for all RDMA Read V2 Request Messages',
  },
  {
    id: 'RV2-6.3-1',
    document: 'v2-draft',
    section: '6.3',
    text: 'The queue number field for the DDP layer MUST be 3.',
  },
  {
    id: 'RV2-8.1-1',
    document: 'v2-draft',
    section: '8.1',
    text: 'The Local Peer MUST send a Terminate Message for each of the following cases:',
  },
];

/** Every requirement. */
export const REQUIREMENTS: readonly Requirement[] = [
  ...RFC7306_REQUIREMENTS,
  ...V2_DRAFT_REQUIREMENTS,
  ...IBTA_VERBS_REQUIREMENTS,
];
