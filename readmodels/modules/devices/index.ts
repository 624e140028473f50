import type { LogPayloads } from "../../../catalog/payloads.js";
import { applyOpen, itemsOf, type OpenEntry } from "../../lib/open-entries.js";
import { firstStr, normName, str, text, type Obj } from "../../lib/payload.js";
import { withDoc, type ReadModel } from "../../module.js";

/** key: device_id (or serial number, UDI), else `<normalized type>|<normalized name or model>`. */
export interface Device extends OpenEntry {
  device_id: string | null;
  device_type: string | null;
  name: string | null;
  manufacturer: string | null;
  model: string | null;
  /** active | inactive; a device sent with entered_in_error (or action remove) is not listed. */
  status: string | null;
}

/** The patient's devices (wearables, implants, home equipment). */
export interface DevicesDoc {
  devices: Device[];
}

/**
 * A device as a log sends it: the payload, or each item of a `devices` list (a form the
 * catalog does not name, which stored logs may hold), read by the same names.
 */
type DeviceItem = Obj & Partial<LogPayloads["device"]>;

/**
 * The named fields of an item, first present name wins: the catalog's names, and the other
 * names clients send a device's id, type and display name under, which the catalog does
 * not name (serial_number, type, name, ...) and so are read by key.
 */
function fieldsOf(item: DeviceItem): Omit<Device, keyof OpenEntry> {
  return {
    device_id: text(item.device_id) ?? str(item, "serial_number") ?? text(item.udi) ?? str(item, "identifier") ?? null,
    device_type: text(item.device_type) ?? str(item, "type") ?? str(item, "category") ?? null,
    name: firstStr(item, ["name", "device_name", "display"]) ?? null,
    manufacturer: text(item.manufacturer) ?? null,
    model: text(item.model) ?? null,
    status: text(item.status) ?? null,
  };
}

/** Every name fieldsOf reads, so none is repeated under details. */
const CONSUMED = [
  "device_id", "serial_number", "udi", "identifier", "device_type", "type", "category", "name", "device_name", "display", "model",
  "manufacturer", "status",
];

export const handles = ["device"] as const;

export const devices: ReadModel<"devices", DevicesDoc, "device"> = {
  key: "devices",
  kind: "stable",
  version: 2,
  handles,
  reads: [],
  initial: () => ({ devices: [] }),
  evolve: (s, log) => {
    let list: readonly Device[] = s.doc.devices;
    let clocks = s.clocks;
    for (const item of itemsOf(log.payload, ["devices"]) as DeviceItem[]) {
      const fields = fieldsOf(item);
      const { device_id, device_type, name, model } = fields;
      if (!device_id && !device_type && !name && !model) continue;
      const key = device_id ?? `${normName(device_type ?? "")}|${normName(name ?? model ?? "")}`;
      ({ list, clocks } = applyOpen<Device>({ list, clocks, ns: "devices", key, item, log, consumed: CONSUMED, fields }));
    }
    return withDoc(s, list === s.doc.devices ? s.doc : { devices: [...list] }, clocks);
  },
};
