/**
 * `GET /$/blockDevices`: the `sort` parameter checked (name, sysfsPath, size, volumeId or
 * volumeLabel; one value; unknown → an error naming it) and the order it gives (ascending,
 * strings in natural order, entries without the key last, ties broken by name). Pure: the listing itself is
 * actors/objstore/devices.ts.
 */

export const DEVICE_SORTS = ['name', 'sysfsPath', 'size', 'volumeId', 'volumeLabel'] as const;
export type DeviceSort = (typeof DEVICE_SORTS)[number];

export class DeviceSortError extends Error {
  readonly code = 'INVALID_SORT';
}

/** The `sort` values of a query (URLSearchParams.getAll): none → 'name'. */
export function parseDeviceSort(values: string[]): DeviceSort {
  if (values.length > 1) throw new DeviceSortError(`sort is given ${values.length} times; give one of ${DEVICE_SORTS.join(', ')}`);
  const v = values[0] ?? 'name';
  if (!(DEVICE_SORTS as readonly string[]).includes(v)) throw new DeviceSortError(`unknown sort ${JSON.stringify(v)}; one of ${DEVICE_SORTS.join(', ')}`);
  return v as DeviceSort;
}

export interface SortableDevice {
  name: string;
  sysfsPath: string | null;
  size: number;
  volumeId: number | null;
  volumeLabel: string | null;
}

/** Kernel names in natural order: loop2 before loop10, sda before sdb1. */
export function compareNames(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true });
}

/** A sorted copy (children are sorted by the caller the same way, if it wants). Empty strings count as missing. */
export function sortDevices<T extends SortableDevice>(devices: readonly T[], by: DeviceSort): T[] {
  const key = (d: T) => (d[by] === '' ? null : d[by]);
  return [...devices].sort((a, b) => {
    const x = key(a);
    const y = key(b);
    if (x !== y) {
      if (x === null) return 1;
      if (y === null) return -1;
      const c = typeof x === 'string' && typeof y === 'string' ? compareNames(x, y) : x < y ? -1 : 1;
      if (c) return c;
    }
    return compareNames(a.name, b.name);
  });
}
