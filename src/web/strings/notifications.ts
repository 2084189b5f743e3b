import { count } from './units.js';

const SHARE_KIND: Record<string, string> = { share_copy: 'copy', private: 'private share', public: 'public link', upload: 'upload link' };
const kind = (p: Record<string, unknown>, key: string) => SHARE_KIND[String(p[key])] ?? 'share';
const percent = (p: Record<string, unknown>) => (Number(p.quota) > 0 ? Math.floor((Number(p.used) * 100) / Number(p.quota)) : 0);

/** Every word of the notifications page (pages/notifications.tsx) and its count in the navigation. */
export const notifications = {
  nav: 'Notifications',
  /** Read after Notifications in the navigation. */
  navCount: (n: number) => `, ${count(n, 'notification')}`,
  title: 'Notifications',
  none: 'You have no notifications.',
  deleteOne: 'Delete',
  deleteNamed: (text: string) => `Delete notification: ${text}`,
  deleteAll: 'Delete all notifications',
  deleted: 'Notification deleted.',
  allDeleted: 'All notifications deleted.',
  at: (when: string) => `on ${when}`,
  /** The words of a notification, by its kind (docs/api.md "Notifications"); undefined: the store's own. */
  text: (k: string, p: Record<string, unknown>): string | undefined => {
    const name = String(p.name ?? '');
    switch (k) {
      case 'copy_offered':
        return p.group_name === undefined ? `${String(p.sharer_fullname)} shared a copy of “${name}” with you` : `${String(p.sharer_fullname)} shared a copy of “${name}” with ${String(p.group_name)}`;
      case 'approval_waiting':
        return `${String(p.requester_fullname)} asks you to approve a ${kind(p, 'share_type')} of “${name}”`;
      case 'request_approved':
        return `${String(p.by_fullname)} approved your ${kind(p, 'share_type')} of “${name}”`;
      case 'request_rejected':
        return `${String(p.by_fullname)} rejected your ${kind(p, 'share_type')} of “${name}”`;
      case 'quota_near':
        return p.group_name === undefined ? `Your drive is ${percent(p)} % full` : `The drive of ${String(p.group_name)} is ${percent(p)} % full`;
      case 'link_expiring':
        return `Your ${kind(p, 'link_type')} to “${name}” expires soon`;
      default:
        return undefined;
    }
  },
  comment: (text: string) => `Note: ${text}`,
};
