//! What the tool reads of an RTOS from the guest's ELF, to name the tasks
//! it tells apart (issue 39, RTOS-aware accounting): for FreeRTOS, where
//! the pointer to the running task's control block is (`pxCurrentTCB`)
//! and where a task's name is in that block (the `pcTaskName` member of
//! `struct tskTaskControlBlock`, from the DWARF the kernel was built with:
//! its offset depends on the kernel's configuration).

use super::dwarf::load_dwarf;
use super::elf::GuestImage;
use gimli::{AttributeValue, EndianSlice, RunTimeEndian};

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// Where FreeRTOS keeps the running task and its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreeRtosLayout {
    /// The address of `pxCurrentTCB`.
    pub current_tcb: u64,
    /// `pcTaskName`'s offset in the control block, and its length
    /// (configMAX_TASK_NAME_LEN).
    pub name_offset: u64,
    pub name_len: u64,
    /// `pxStack`'s offset: the lowest address of the task's stack.
    pub stack_offset: u64,
}

/// FreeRTOS's layout in `image`, when it is a FreeRTOS program built with
/// debug information (`None` otherwise: tasks are then told apart by
/// their stacks alone).
pub fn freertos(image: &GuestImage) -> Option<FreeRtosLayout> {
    let current_tcb = image.symbol("pxCurrentTCB")?;
    let bytes = std::fs::read(&image.file).ok()?;
    let dwarf = load_dwarf(&bytes).ok().flatten()?;
    let (name_offset, name_len) = tcb_member(&dwarf, "pcTaskName")?;
    let (stack_offset, _) = tcb_member(&dwarf, "pxStack")?;
    Some(FreeRtosLayout {
        current_tcb,
        name_offset,
        name_len,
        stack_offset,
    })
}

/// A member's offset in `struct tskTaskControlBlock`, and its element
/// count if it is an array (1 if not).
fn tcb_member(dwarf: &gimli::Dwarf<Reader<'_>>, name: &str) -> Option<(u64, u64)> {
    let mut units = dwarf.units();
    while let Ok(Some(header)) = units.next() {
        let Ok(unit) = dwarf.unit(header) else {
            continue;
        };
        let mut entries = unit.entries();
        while let Ok(Some((_, entry))) = entries.next_dfs() {
            if entry.tag() == gimli::DW_TAG_structure_type
                && name_is(dwarf, &unit, entry, "tskTaskControlBlock")
            {
                if let Some(found) = member(dwarf, &unit, entry.offset(), name) {
                    return Some(found);
                }
            }
        }
    }
    None
}

fn name_is(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    entry: &gimli::DebuggingInformationEntry<Reader<'_>>,
    name: &str,
) -> bool {
    entry
        .attr_value(gimli::DW_AT_name)
        .ok()
        .flatten()
        .and_then(|v| dwarf.attr_string(unit, v).ok())
        .is_some_and(|s| s.slice() == name.as_bytes())
}

/// The member `name` of the structure at `structure`: its offset and, for
/// an array, its element count.
fn member(
    dwarf: &gimli::Dwarf<Reader<'_>>,
    unit: &gimli::Unit<Reader<'_>>,
    structure: gimli::UnitOffset,
    name: &str,
) -> Option<(u64, u64)> {
    let mut tree = unit.entries_tree(Some(structure)).ok()?;
    let root = tree.root().ok()?;
    let mut children = root.children();
    while let Ok(Some(child)) = children.next() {
        let entry = child.entry();
        if entry.tag() != gimli::DW_TAG_member || !name_is(dwarf, unit, entry, name) {
            continue;
        }
        let offset = match entry.attr_value(gimli::DW_AT_data_member_location).ok()?? {
            AttributeValue::Udata(v) => v,
            AttributeValue::Data1(v) => u64::from(v),
            AttributeValue::Data2(v) => u64::from(v),
            AttributeValue::Data4(v) => u64::from(v),
            _ => return None,
        };
        let len = match entry.attr_value(gimli::DW_AT_type).ok()?? {
            AttributeValue::UnitRef(t) => array_len(unit, t).unwrap_or(1),
            _ => 1,
        };
        return Some((offset, len));
    }
    None
}

/// The element count of the array type at `at` (its subrange's count or
/// upper bound + 1).
fn array_len(unit: &gimli::Unit<Reader<'_>>, at: gimli::UnitOffset) -> Option<u64> {
    let mut tree = unit.entries_tree(Some(at)).ok()?;
    let root = tree.root().ok()?;
    if root.entry().tag() != gimli::DW_TAG_array_type {
        return None;
    }
    let mut children = root.children();
    while let Ok(Some(child)) = children.next() {
        let entry = child.entry();
        if entry.tag() != gimli::DW_TAG_subrange_type {
            continue;
        }
        if let Some(count) = entry.attr_value(gimli::DW_AT_count).ok()? {
            return count.udata_value();
        }
        return entry
            .attr_value(gimli::DW_AT_upper_bound)
            .ok()??
            .udata_value()
            .map(|b| b + 1);
    }
    None
}
